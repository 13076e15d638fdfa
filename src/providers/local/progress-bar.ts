import type { DownloadProgress } from './download-model.js';

const UNITS = ['B', 'KB', 'MB', 'GB', 'TB'] as const;

export function formatBytes(bytes: number): string {
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < UNITS.length - 1) {
    value /= 1024;
    unit++;
  }
  return `${unit === 0 ? value : value.toFixed(1)} ${UNITS[unit]}`;
}

/**
 * One line of download progress, e.g. `[##########----------]  50.0%  12.0 MB / 24.0 MB`.
 * Without a known total it shows only the byte count.
 */
export function formatProgressBar(progress: DownloadProgress, width = 30): string {
  const received = formatBytes(progress.receivedBytes);
  if (progress.totalBytes === null || progress.totalBytes <= 0) return `${received} downloaded`;
  const ratio = Math.min(1, progress.receivedBytes / progress.totalBytes);
  const filled = Math.round(ratio * width);
  const percent = `${(ratio * 100).toFixed(1)}%`.padStart(6);
  return `[${'#'.repeat(filled)}${'-'.repeat(width - filled)}] ${percent}  ${received} / ${formatBytes(progress.totalBytes)}`;
}

export interface ProgressPrinter {
  update(progress: DownloadProgress): void;
  /** Prints the final state and ends the line. */
  done(): void;
}

/**
 * Redraws the bar in place on a terminal (at most every `intervalMs`); on a pipe or log file, where
 * `\r` does not redraw, it prints a line only every 10%.
 */
export function createProgressPrinter(out: NodeJS.WriteStream = process.stderr, intervalMs = 100): ProgressPrinter {
  let last: DownloadProgress | undefined;
  let lastDrawAt = 0;
  let lastDecile = -1;
  const draw = (progress: DownloadProgress): void => {
    if (out.isTTY) out.write(`\r${formatProgressBar(progress)}`);
    else out.write(`${formatProgressBar(progress)}\n`);
  };
  return {
    update(progress) {
      last = progress;
      if (out.isTTY) {
        const now = Date.now();
        if (now - lastDrawAt < intervalMs) return;
        lastDrawAt = now;
        draw(progress);
      } else if (progress.totalBytes) {
        const decile = Math.floor((progress.receivedBytes / progress.totalBytes) * 10);
        if (decile > lastDecile) {
          lastDecile = decile;
          draw(progress);
        }
      }
    },
    done() {
      if (last && out.isTTY) out.write(`\r${formatProgressBar(last)}\n`);
      else if (last && lastDecile < 10) draw(last);
    },
  };
}
