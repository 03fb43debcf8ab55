// A library linked against a Weft library of another version (libweft_oldversion.so.0.0.9, which
// the test build makes and the library cannot find at run time), as one built against an older
// Weft install is after an upgrade.
extern "C" int weft_oldversion_function();

extern "C" [[gnu::visibility("default")]] void weft_register_algorithms(void*) {
  weft_oldversion_function();
}
