"""msccl, as Weft's MSCCLang face provides it: the language (msccl.language), its collectives and
the topologies MSCCLang programs name. Only on sys.path while `python3 -m weft.mscclang` runs a
program, so an installed msccl-tools stays usable otherwise. msccl-tools' synthesizer (autosynth,
cli, ncclize, ...) is not part of it."""
