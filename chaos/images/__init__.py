"""Offline image builds: base, worker (one per TF version) and proxy images,
labelled with a hash of their inputs and rebuilt only when those change.

    from chaos.images import ensure_images, worker_image_tag, PROXY_IMAGE
    tags = ensure_images(tf_versions=("2.21", "2.15"), progress=print)
    tags["worker:tf2.21"]  # "tfchaos/worker:tf2.21"

See docs/images.md.
"""

from chaos.images.base import DEFAULT_BASE_IMAGE, FALLBACK_BASE_TAG
from chaos.images.builder import ensure_images
from chaos.images.plans import DEFAULT_TF_VERSIONS, PROXY_IMAGE
from chaos.images.status import ImageState, image_status
from chaos.images.versions import TFSpec, parse_tf_version, worker_image_tag

__all__ = [
    "DEFAULT_BASE_IMAGE",
    "DEFAULT_TF_VERSIONS",
    "FALLBACK_BASE_TAG",
    "PROXY_IMAGE",
    "ImageState",
    "TFSpec",
    "ensure_images",
    "image_status",
    "parse_tf_version",
    "worker_image_tag",
]
