// Registers bench/ablate-hook.mjs (`node --import tsx --import ./bench/ablate-register.mjs …`): after
// tsx's own hooks, so it edits the module tsx has compiled. Not a test.

import { register } from "node:module";

register("./ablate-hook.mjs", import.meta.url);
