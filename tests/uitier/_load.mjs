// The npm packages, from the tier's own node_modules ($TOOLWIRE_UI_MODULES,
// installed by `make test-ui`), whatever directory this script is in.
import { createRequire } from "node:module";
import { pathToFileURL } from "node:url";

const where = createRequire(process.env.TOOLWIRE_UI_MODULES + "/package.json");
export const load = (name) => import(pathToFileURL(where.resolve(name)).href);
