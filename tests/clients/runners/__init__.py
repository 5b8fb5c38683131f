"""Client runners: each takes a scenario request (scenario.request) and returns observed data.

Out-of-process runners (confluent-kafka, kafka-python, kafkajs, Java) read the request as
JSON on stdin and print the result as JSON on stdout, so a hung client can be killed by a
timeout without taking pytest down. run_client() is the one entry point for tests.
"""
