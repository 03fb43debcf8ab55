// A library with the entry point but no version stamp of its own, linked against the DSL (whose
// own stamp must not be taken for the library's).
extern "C" [[gnu::visibility("default")]] void weft_register_algorithms(void*) {}
