"""spark-submit flags shared by the tests that start the job in a fresh JVM."""

# Command-line settings win over a properties file: keep a test's JVM small and port-free.
SMALL_LOCAL_SPARK = ["--master", "local[1]", "--driver-memory", "1g", "--conf", "spark.ui.enabled=false"]
