// k8s_validate.mjs: Kubernetes objects checked against the Kubernetes API's
// schemas, offline: the kubernetes-models package (npm, in tests/) carries
// them, compiled into JSON Schema validators. Reads a JSON array of objects
// on stdin; prints "KIND/NAME ok" or "KIND/NAME: ERRORS" for each, in order.
//   node tests/lib/k8s_validate.mjs < objects.json
import { readFileSync } from "node:fs";

const docs = JSON.parse(readFileSync(0, "utf8"));
for (const doc of docs) {
    const id = `${doc.kind}/${doc.metadata?.name}`;
    // apiVersion "apps/v1" is kubernetes-models/apps/v1/KIND; "v1" (the
    // core group) is kubernetes-models/v1/KIND.
    let mod;
    try {
        mod = await import(`kubernetes-models/${doc.apiVersion}/${doc.kind}`);
    } catch (e) {
        console.log(`${id}: no schema for ${doc.apiVersion} ${doc.kind}`);
        continue;
    }
    try {
        new mod[doc.kind](doc).validate();
        console.log(`${id} ok`);
    } catch (e) {
        const errs = (e.errors || [e]).map((x) => `${x.instancePath || ""} ${x.message}`.trim());
        console.log(`${id}: ${errs.join("; ")}`);
    }
}
