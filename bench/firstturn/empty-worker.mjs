// The floor of worker mode's start in bench/firstturn/blocked.mjs: a module
// worker with nothing to load, which answers once it runs.
postMessage("up");
