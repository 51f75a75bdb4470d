// Placeholder until the ui library lands.
