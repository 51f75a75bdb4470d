// main() of the test runners plab_core_tests and plab_ui_tests: runs the
// test class named on the command line (tests/support/test_registry.h).
#include "support/test_registry.h"

int main(int argc, char** argv) { return plab::test::runRegisteredTest(argc, argv); }
