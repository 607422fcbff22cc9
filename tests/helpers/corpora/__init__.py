"""Messages of each envelope format for the integration tests: the corpora under
integration_tests/data/ read as they land, and the hand-made messages several modules share."""
