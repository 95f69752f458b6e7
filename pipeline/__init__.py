"""PySpark jobs over the assignor library: replay, simulate, report."""
