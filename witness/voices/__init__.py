"""Known voices: speakers enrolled once by name (``witness enroll``) and recognised on later
runs. ``store``: the voice files in the user's data folder; ``enroll``: a recording reduced
to a voice print; ``match``: diarized speakers matched to enrolled voices."""
