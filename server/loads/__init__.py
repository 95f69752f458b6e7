"""Where partition loads come from when a request does not carry them (issue 25)."""
