"""msccl-tools' synthesizer collectives (SCCL's). MSCCLang programs sometimes import them with a
star and never use them; Weft's face has none, so the import brings nothing that could shadow the
language's names (Chunk, Collective)."""

__all__ = []
