// Validates Kubernetes manifests offline against the Kubernetes API's OpenAPI schema, as the
// npm package kubernetes-models compiles it (one validator per kind), and prints every document
// as JSON for the caller's own checks (tests/integration/test_container_manifests.py).
//
// usage: node k8s-validate.js NODE_MODULES FILE...   (kustomization.yaml files are parsed only)
// Prints one JSON object {"documents": [{"file", "index", "doc"}], "errors": [...]} and exits
// 0 when there are no errors, 1 otherwise. An error is a YAML syntax error, a document with no
// known apiVersion/kind, a schema violation (a wrong type, a missing required field, a bad enum
// value), or a field the schema does not know (a misspelt `readinessProbes` would otherwise be
// dropped in silence by the validator, as by an API server without strict field validation).
"use strict";
const fs = require("fs");
const path = require("path");

const [modules, ...files] = process.argv.slice(2);
const YAML = require(path.join(modules, "yaml"));
const schemas = path.join(modules, "kubernetes-models", "_schemas");

// apiVersion + kind -> the schema's compiled validator, e.g. apps/v1 StatefulSet ->
// _schemas/IoK8sApiAppsV1StatefulSet.js, v1 ConfigMap -> IoK8sApiCoreV1ConfigMap.js.
function validatorFor(apiVersion, kind) {
  const parts = String(apiVersion).split("/");
  const group = parts.length === 2 ? parts[0].split(".")[0] : "core";
  const version = parts[parts.length - 1];
  const cap = (s) => s.charAt(0).toUpperCase() + s.slice(1);
  const file = path.join(schemas, "IoK8sApi" + cap(group) + cap(version) + kind + ".js");
  return fs.existsSync(file) ? require(file).validate : null;
}

// A copy of obj whose every object records the keys the validator reads. The compiled
// validator reads each property its schema names (`data.name`, `data.args`, ...) and iterates
// the keys of maps (labels, resources); a key of a fixed-shape object that it never read is a
// field the schema does not have.
function track(obj, where, seen) {
  if (obj === null || typeof obj !== "object") {
    return obj;
  }
  const rec = { obj, where, read: new Set(), iterated: Array.isArray(obj) };
  seen.push(rec);
  const copy = Array.isArray(obj)
    ? obj.map((v, i) => track(v, where + "/" + i, seen))
    : Object.fromEntries(Object.entries(obj).map(([k, v]) => [k, track(v, where + "/" + k, seen)]));
  return new Proxy(copy, {
    get(t, k, r) {
      if (typeof k === "string") rec.read.add(k);
      return Reflect.get(t, k, r);
    },
    has(t, k) {
      if (typeof k === "string") rec.read.add(k);
      return Reflect.has(t, k);
    },
    ownKeys(t) {
      rec.iterated = true;
      return Reflect.ownKeys(t);
    },
  });
}

const out = { documents: [], errors: [] };
for (const file of files) {
  const docs = YAML.parseAllDocuments(fs.readFileSync(file, "utf8"));
  docs.forEach((d, index) => {
    const where = file + " document " + (index + 1);
    if (d.errors.length) {
      out.errors.push(where + ": YAML: " + d.errors.map((e) => e.message).join("; "));
      return;
    }
    const doc = d.toJS();
    if (doc === null || doc === undefined) {
      return; // an empty document (a trailing ---)
    }
    out.documents.push({ file, index, doc });
    if (String(doc.apiVersion).startsWith("kustomize.config.k8s.io/")) {
      return; // kustomize's own file, no API object: the caller checks what it names
    }
    const validate = validatorFor(doc.apiVersion, doc.kind);
    if (!validate) {
      out.errors.push(where + ": no schema for apiVersion " + doc.apiVersion + " kind " + doc.kind);
      return;
    }
    const seen = [];
    if (!validate(track(doc, "", seen))) {
      for (const e of validate.errors) {
        const msg = e.message || e.keyword + " " + JSON.stringify(e.params);
        out.errors.push(where + " (" + doc.kind + "): " + (e.instancePath || "/") + " " + msg);
      }
    }
    const unknown = []; // the outermost unknown fields only, not what they hold
    for (const rec of seen) {
      if (rec.iterated || unknown.some((u) => rec.where === u || rec.where.startsWith(u + "/"))) continue;
      for (const k of Object.keys(rec.obj)) {
        if (!rec.read.has(k)) {
          unknown.push(rec.where + "/" + k);
          out.errors.push(where + " (" + doc.kind + "): " + rec.where + "/" + k + ": unknown field");
        }
      }
    }
  });
}
process.stdout.write(JSON.stringify(out) + "\n");
process.exit(out.errors.length ? 1 : 0);
