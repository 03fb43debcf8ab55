// What a library of algorithms built against another Weft looks like to weftc: the entry point,
// and a version stamp that is not this Weft's. Written without weft/dsl/registry.h, which would
// stamp it with this build's version.
extern "C" {
[[gnu::visibility("default")]] extern const char weft_algorithm_library_version[] = "0.0.9";
[[gnu::visibility("default")]] void weft_register_algorithms(void*) {}
}
