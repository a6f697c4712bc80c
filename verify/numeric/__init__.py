"""The numeric core: the NW estimator and its compiled kernel, multi-head attention as an NW
ensemble, subspace diversity, the data-generating processes, the Monte Carlo decomposition
engine, certified enclosures, Haar baselines and the code generated from ``proofs/``."""
