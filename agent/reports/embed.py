"""Images written into the report itself (data URIs), so `report.html` still shows them after it is moved,
mailed or opened outside its run folder. Screenshots become small JPEG thumbnails (a few KB each); the
full-size files stay in the run folder, linked relatively."""

from __future__ import annotations

import base64
import io
from pathlib import Path

THUMB_WIDTH = 280


def data_uri(path: Path) -> str:
    """A small file (a plot) as is; '' when it cannot be read."""
    try:
        data = path.read_bytes()
    except OSError:
        return ""
    kind = "png" if path.suffix.lower() == ".png" else "jpeg"
    return f"data:image/{kind};base64,{base64.b64encode(data).decode()}"


def thumbnail_uri(path: Path, width: int = THUMB_WIDTH) -> str:
    """A screenshot as a JPEG thumbnail; '' when it cannot be read (the report then shows the link only)."""
    from PIL import Image, UnidentifiedImageError

    try:
        with Image.open(path) as image:
            image = image.convert("RGB")
            height = max(1, round(image.height * width / max(1, image.width)))
            image.thumbnail((width, height))
            buffer = io.BytesIO()
            image.save(buffer, "JPEG", quality=60, optimize=True)
    except (OSError, UnidentifiedImageError, ValueError):
        return ""
    return f"data:image/jpeg;base64,{base64.b64encode(buffer.getvalue()).decode()}"
