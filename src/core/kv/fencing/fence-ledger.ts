/**
 * The WAL fences garbage collection must keep: the first WAL object of every writer epoch. The
 * writer before that epoch may still hold a delayed put for exactly that id; while the object
 * exists the put fails, and if it were deleted the put would succeed and acknowledge a commit no
 * newer writer will ever replay. One small object and one manifest entry per writer open.
 *
 * A writer learns them from its manifest (fences below `walStart`), from replay (the first object
 * of each epoch it reads) and from its own fencing, and records them all in every manifest it
 * publishes, so a fence is always recorded before a flush can move `walStart` past it.
 */
export class FenceLedger {
  private readonly byEpoch = new Map<number, number>();
  private readonly ids = new Set<number>();

  constructor(recorded: readonly (readonly [number, number])[]) {
    for (const [epoch, walId] of recorded) this.note(epoch, walId);
  }

  /** Called for WAL objects in ascending id order: the first one seen of an epoch is its fence. */
  note(epoch: number, walId: number): void {
    if (this.byEpoch.has(epoch)) return;
    this.byEpoch.set(epoch, walId);
    this.ids.add(walId);
  }

  isFence(walId: number): boolean {
    return this.ids.has(walId);
  }

  /** For the manifest, ascending by epoch. */
  toManifest(): [number, number][] {
    return [...this.byEpoch].sort((a, b) => a[0] - b[0]);
  }
}
