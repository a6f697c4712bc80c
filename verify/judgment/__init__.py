"""The judgment layer: evidence, roles and the one verdict rule; replayable counterexamples; the
declaration of a claim as its parts."""
