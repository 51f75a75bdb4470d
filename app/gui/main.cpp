// Placeholder until the GUI lands.
int main() { return 0; }
