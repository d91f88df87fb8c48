package core

// Version is agentrt's version: the module publishes it as its global's
// version, the worker reports it on /healthz, and js/package.json carries
// the same string (a test checks).
const Version = "0.1.0"
