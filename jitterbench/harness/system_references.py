"""A check's references: the system's reference file (its own entry, the variables the rules assert
only) staged for ReFrame's `$ref`, and after the run the file whose fingerprint that run's machine
matches (SystemReferences).
"""
from __future__ import annotations

import os

import reframe as rfm
import reframe.utility.typecheck as typ
from reframe.core.builtins import run_after, variable
from reframe.core.exceptions import ReframeError

from .. import checkout, fingerprint, references, roles


class SystemReferences(rfm.RegressionTestPlugin):
    """References from <system>.yaml through ReFrame's `$ref`: the machine's own (the main job's
    baseline), else reference_data's (checkout.reference_files).  With strict_references
    (acceptance mode) a missing file fails the test; a malformed one always does, naming the
    entry.  The check runs against its own entry of the file, with the variables the rules do
    not assert unbounded (roles.asserted_only: maxima over calls, percentiles this run's
    calls cannot bound), written into its stage folder; not_asserted names them.  A check whose
    run says what machine it ran on takes the first file whose fingerprint that run matches
    (take_the_machines_references); references_from names the file, or why none."""

    strict_references = variable(typ.Bool, value=False)
    not_asserted = variable(str, value="", loggable=True)
    references_from = variable(str, value="", loggable=True)

    @run_after("setup")
    def system_references(self):
        self.reference_docs = []
        for path in checkout.reference_files(self.current_system.name):
            try:
                self.reference_docs.append((path, references.load(path)))
            except references.ReferenceFileError as e:
                raise ReframeError(str(e)) from None
        if not self.reference_docs:
            if self.strict_references:
                raise ReframeError(f"no reference file for system '{self.current_system.name}' in "
                                   f"{' or '.join(map(str, checkout.reference_dirs()))}")
            self.references_from = "none: no file for this system"
            return
        self.reference = {"$ref": self.stage_references(*self.reference_docs[0])}

    def stage_references(self, path, doc):
        """Writes this check's entry of doc, asserted variables only, as the stage's references.yaml."""
        own, released = roles.asserted_only(doc, type(self).__name__, getattr(self, "calls", None) or None)
        self.not_asserted = ",".join(released)
        self.references_from = os.path.relpath(path, checkout.root()) if path.startswith(f"{checkout.root()}{os.sep}") else path
        mine = os.path.join(self.stagedir, "references.yaml")
        with open(mine, "w") as f:
            f.write(references.dump(own))
        return mine

    def take_the_machines_references(self, facts):
        """After the run: the first file whose fingerprint matches what the run said of its
        machine (facts: cpu, mpi_library, transport), else none, saying why (strict: a failure)."""
        if not self.reference_docs:
            return
        why = []
        for path, doc in self.reference_docs:
            differ = fingerprint.differences(doc.get("fingerprint"), facts, self.current_environ.name)
            if not differ:
                if path != self.reference_docs[0][0]:
                    self.stage_references(path, doc)
                    self.reference.resolve_external_references(self)
                return
            why.append(f"{os.path.basename(os.path.dirname(path))}/{os.path.basename(path)}: {'; '.join(differ)}")
        path, doc = self.reference_docs[0]
        self.stage_references(path, {"provenance": doc["provenance"]})  # no entry: nothing asserted
        self.reference.resolve_external_references(self)
        self.references_from = "none of this machine: " + " | ".join(why)
        if self.strict_references:
            raise ReframeError(f"no references of this machine: {' | '.join(why)}")
