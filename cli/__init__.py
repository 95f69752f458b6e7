"""The ``kassign`` command (``main``): serve, assign, call, health, and the pipeline's Spark jobs
(``spark_jobs``); ``python -m kassign.cli`` runs it. The top layer: nothing imports it."""
