// P2: a macro call at file scope followed by a .member(...) chain
// (benchmark registration style).
struct Registration {
  Registration& set_name(const char*) { return *this; }
  Registration& set_min(int) { return *this; }
};
#define REGISTER_BENCH(f) static Registration reg_##f = Registration()
void saxpy_bench() {}
REGISTER_BENCH(saxpy_bench).set_name("saxpy").set_min(4);
