// Gives plab_test_support a translation unit even before helpers exist, so
// its precompiled header can be shared by every core test.
