// The calibration of bench/firstturn/blocked.mjs's sampler: a module worker
// that computes for 300 ms and answers, leaving the page's main thread
// nothing to do. What the sampler counts as busy meanwhile is other
// threads taking the main thread's core, not the page's work.
const t = performance.now();
let x = 0;
while (performance.now() - t < 300) x++;
postMessage(x);
