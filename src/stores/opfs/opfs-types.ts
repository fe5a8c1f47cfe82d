/**
 * The slice of the File System API (origin private file system) this adapter uses, typed here
 * because the project's `lib` has no WebWorker or DOM.AsyncIterable types, and `move()` is in no
 * TypeScript lib yet. Structural: the browser's own handles satisfy these interfaces.
 */

/**
 * `FileSystemSyncAccessHandle`: dedicated workers only; holds an exclusive lock on its file,
 * unless opened in mode 'readwrite-unsafe' (Chromium 121+), which any number of handles in that
 * mode share. `mode` says which lock was taken (absent where the browser knows no modes).
 */
export interface SyncAccessHandle {
  readonly mode?: string;
  write(buffer: Uint8Array, options?: { at?: number }): number;
  read(buffer: Uint8Array, options?: { at?: number }): number;
  getSize(): number;
  flush(): void;
  close(): void;
}

export interface OpfsFileHandle {
  readonly kind: 'file';
  readonly name: string;
  getFile(): Promise<File>;
  /** Missing outside dedicated workers. */
  createSyncAccessHandle?(options?: { mode?: 'readwrite' | 'read-only' | 'readwrite-unsafe' }): Promise<SyncAccessHandle>;
  /** Renames within the same directory, replacing an existing file of that name (Chromium). */
  move(newName: string): Promise<void>;
}

export interface OpfsDirectoryHandle {
  readonly kind: 'directory';
  readonly name: string;
  getDirectoryHandle(name: string, options?: { create?: boolean }): Promise<OpfsDirectoryHandle>;
  getFileHandle(name: string, options?: { create?: boolean }): Promise<OpfsFileHandle>;
  removeEntry(name: string, options?: { recursive?: boolean }): Promise<void>;
  entries(): AsyncIterable<[string, OpfsFileHandle | OpfsDirectoryHandle]>;
}

/** `navigator.storage.getDirectory`, if this context has it. */
export function originPrivateRoot(): (() => Promise<OpfsDirectoryHandle>) | undefined {
  const storage = (globalThis as { navigator?: { storage?: { getDirectory?: () => Promise<unknown> } } }).navigator?.storage;
  if (typeof storage?.getDirectory !== 'function') return undefined;
  return () => storage.getDirectory!() as Promise<OpfsDirectoryHandle>;
}

/** True where `FileSystemFileHandle#createSyncAccessHandle` exists: dedicated workers only. */
export function hasSyncAccessHandles(): boolean {
  const ctor = (globalThis as { FileSystemFileHandle?: { prototype: object } }).FileSystemFileHandle;
  return ctor !== undefined && 'createSyncAccessHandle' in ctor.prototype;
}
