import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describeBlobStoreContract } from "./blob-store.contract.js";
import { LocalBlobStore } from "./local-blob-store.js";

describeBlobStoreContract(
  "LocalBlobStore",
  async () => new LocalBlobStore(join(await mkdtemp(join(tmpdir(), "blobs-")), "files")),
);
