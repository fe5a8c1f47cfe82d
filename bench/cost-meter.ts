/**
 * CPU time and JS heap allocation over a stretch of a benchmark (Node only), for per-step cost
 * figures such as `cpu_us_per_step` and `alloc_kb_per_step`.
 *
 * CPU is `process.cpuUsage()` (user + system, every thread of the process, so fsyncs on the
 * libuv pool count too). Allocation is the JS heap's growth between collections, summed over
 * every GC seen by `v8.GCProfiler` plus the growth since the last one; ArrayBuffer backing
 * stores live outside the JS heap and are not counted.
 */
import { GCProfiler } from 'node:v8';

export interface Cost {
  readonly cpuUs: number;
  readonly allocBytes: number;
}

export interface CostMeter {
  /** Starts (or resumes) measuring. */
  start(): void;
  /** Pauses measuring; what was measured since `start` adds to the total. */
  pause(): void;
  readonly total: Cost;
}

function usedHeapNow(profilerStats: { afterGC: { heapStatistics: { usedHeapSize: number } } }[], fallback: number): number {
  const last = profilerStats.at(-1);
  return last === undefined ? fallback : last.afterGC.heapStatistics.usedHeapSize;
}

export function costMeter(): CostMeter {
  let cpuUs = 0;
  let allocBytes = 0;
  let running: { cpu: NodeJS.CpuUsage; profiler: GCProfiler; heapAtStart: number } | undefined;
  return {
    start() {
      if (running) return;
      const profiler = new GCProfiler();
      profiler.start();
      running = { cpu: process.cpuUsage(), profiler, heapAtStart: process.memoryUsage().heapUsed };
    },
    pause() {
      if (!running) return;
      const cpu = process.cpuUsage(running.cpu);
      const heapAtEnd = process.memoryUsage().heapUsed;
      const stats = running.profiler.stop()?.statistics ?? [];
      let previousAfter = running.heapAtStart;
      for (const gc of stats) {
        allocBytes += Math.max(0, gc.beforeGC.heapStatistics.usedHeapSize - previousAfter);
        previousAfter = gc.afterGC.heapStatistics.usedHeapSize;
      }
      allocBytes += Math.max(0, heapAtEnd - usedHeapNow(stats, running.heapAtStart));
      cpuUs += cpu.user + cpu.system;
      running = undefined;
    },
    get total() {
      return { cpuUs, allocBytes };
    },
  };
}
