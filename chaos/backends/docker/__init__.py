"""The single-host Docker backend: workers as containers on one engine, a
private bridge network, a named volume for checkpoints. The only code besides
image building (chaos.images) that imports the Docker SDK."""
