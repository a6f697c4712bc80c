"""C9 reading ii: layer 0 of a pretrained BERT in the inner product of its input covariance Σ
(:func:`weighted_layer0`): principal angles between ``Σ^{1/2} W_h``, the squared canonical correlations of
the heads' features, against Haar frames mapped by ``Σ^{1/2}``. The per-layer figures of every model are
:mod:`verify.experiments.pretrained`'s (a checkpoint named by data only, nothing imported).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from verify._validate import fail
from verify.experiments.checkpoint import SafetensorsFile, open_checkpoint
from verify.io import read_json
from verify.numeric.baseline import embedding_covariance, haar_hdi_draws, haar_hdi_moments, hdi_batch, metric_factor

#: Positions of the layer-0 input distribution: uniform over the first 128 (sentence lengths).
POSITIONS = 128
#: Largest model a replay analyses (width and heads; MiniLM has d = 384, H = 12).
MAX_WIDTH = 8192


def open_model(path: Path) -> Any:
    """The checkpoint at ``path`` (:func:`verify.experiments.checkpoint.open_checkpoint`), within the size caps."""
    ck = open_checkpoint(path)
    if ck.d > MAX_WIDTH or ck.H > MAX_WIDTH or ck.num_layers > 1024:
        raise fail("checkpoint", f"d = {ck.d}, H = {ck.H}, {ck.num_layers} layers",
                   f"a model of width and heads at most {MAX_WIDTH} and at most 1024 layers")
    return ck


def _heads(ck: Any, layer: int, tensor: str) -> np.ndarray:
    wq, wk = ck.heads(layer)
    return wk if tensor == "keys" else wq


def _bert_embeddings(ck: Any) -> tuple[dict[str, np.ndarray], float]:
    """Word, position and token-type embeddings and the embedding LayerNorm of a BERT layout."""
    if ck.layout != "bert":
        raise fail("checkpoint", f"layout {ck.layout!r}", "a BERT layout (the layer-0 input is its embeddings)")
    files = {name: sf for f in ck.files for sf in [SafetensorsFile(f)] for name in sf.names}
    want = {"word": ("word_embeddings.weight",), "position": ("position_embeddings.weight",),
            "token_type": ("token_type_embeddings.weight",), "ln_weight": ("LayerNorm.weight", "LayerNorm.gamma"),
            "ln_bias": ("LayerNorm.bias", "LayerNorm.beta")}
    out = {}
    for key, names in want.items():
        hit = next((ck.prefix + "embeddings." + n for n in names if ck.prefix + "embeddings." + n in files), None)
        if hit is None:
            raise fail("checkpoint", f"no tensor {ck.prefix}embeddings.{names[0]!r}", "the BERT embedding tensors")
        out[key] = files[hit].get(hit)
        want_shape = (ck.d,) if key.startswith("ln") else None
        if (out[key].shape != want_shape) if want_shape else (out[key].ndim != 2 or out[key].shape[1] != ck.d):
            raise fail(f"tensor {hit}", f"shape {out[key].shape}", f"({ck.d},)" if want_shape else f"(rows, {ck.d})")
    cfg_path = (ck.path if ck.path.is_dir() else ck.path.parent) / "config.json"
    cfg = read_json("config.json", cfg_path)
    eps = cfg.get("layer_norm_eps", 1e-12) if isinstance(cfg, dict) else 1e-12
    if isinstance(eps, bool) or not isinstance(eps, (int, float)) or not 0 <= eps < 1:
        raise fail(f"{cfg_path} key 'layer_norm_eps'", repr(eps), "a number in [0, 1)")
    return out, float(eps)


def weighted_layer0(ck: Any, *, samples: int, draws: int, seed: int) -> dict[str, Any]:
    """Layer 0 in the Σ-inner product: Σ the covariance of the embedding LayerNorm's output for
    uniform tokens and positions below :data:`POSITIONS` (``samples`` draws from the first child of
    ``SeedSequence([seed, 0])``), the keys' and queries' weighted HDI, and the weighted Haar baseline
    (``draws`` sets of H Haar frames mapped by Σ^{1/2}, the second child); the plain figures beside."""
    emb, eps = _bert_embeddings(ck)
    r_cov, r_base = (np.random.default_rng(s) for s in np.random.SeedSequence([int(seed), 0]).spawn(2))
    sigma = embedding_covariance(r_cov, emb["word"], emb["position"], emb["token_type"][0], emb["ln_weight"],
                                 emb["ln_bias"], eps, samples=samples,
                                 positions=min(POSITIONS, emb["position"].shape[0]))
    F, scales = metric_factor(sigma)
    H = _heads(ck, 0, "keys").shape[0]
    base = haar_hdi_draws(r_base, H, ck.d_k, ck.d, draws, scales=scales)
    bmu, bsd = float(base.mean()), float(base.std(ddof=1))
    lam = scales**2
    out: dict[str, Any] = {"samples": samples, "positions": POSITIONS, "draws": draws, "d": ck.d, "H": H,
                           "weighted_haar_mean": bmu, "weighted_haar_sd": bsd,
                           "effective_rank": float(lam.sum() ** 2 / (lam**2).sum())}
    mu, sd = haar_hdi_moments(H, ck.d_k, ck.d)
    for tensor in ("keys", "queries"):
        W = _heads(ck, 0, tensor)
        hw, hp = float(hdi_batch(W, F)), float(hdi_batch(W))
        out[tensor] = {"weighted_hdi": hw, "weighted_z": (hw - bmu) / bsd, "weighted_gap": hw - bmu,
                       "plain_hdi": hp, "plain_z": (hp - mu) / sd, "plain_gap": hp - mu}
    return out
