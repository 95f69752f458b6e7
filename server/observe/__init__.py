"""Observers of the servicer's calls: ``prometheus`` and ``consumer_metrics``, the ``calllog`` and
the request ``journal``. They hang off the servicer's observer protocol; the servicer never
imports them. ``pool_metrics`` is the parent's: its processes, build and worker pool."""
