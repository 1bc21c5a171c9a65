"""The system under test: N TF workers behind the proxy, as Docker containers."""
