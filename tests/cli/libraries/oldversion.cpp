// Stands for a Weft library of another version: only its soname matters.
extern "C" [[gnu::visibility("default")]] int weft_oldversion_function() { return 0; }
