"""Experiments on real NW heads and checkpoints: training of NW-ensemble heads (C9), pretrained
checkpoints, the head-allocation advice and C7's sweeps."""
