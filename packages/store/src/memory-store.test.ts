import { describeStoreContract } from "./contract/index.js";
import { MemoryStore } from "./memory-store.js";

describeStoreContract("MemoryStore", async () => new MemoryStore());
