"""Vision: cameras, sticker location and colour classification."""
