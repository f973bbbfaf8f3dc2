"""Speaker diarization: models (segmentation, embeddings, VAD) and the numerics around them."""
