#!/usr/bin/env python3
"""Generate the PMPI wrappers from functions.list, the preprocessed mpi.h and wrapper.c.in.

Writes three files: the wrappers (C), the function-id header, and the list of every exported
MPI_ symbol (generated and manual) for the symbol test. Build-time only; nothing generated is
committed.
"""
import re
import sys

VARIANTS = {
    "collective": lambda b: [b, b + "_c", "I" + b.lower(), "I" + b.lower() + "_c",
                             b + "_init", b + "_init_c"],
    "p2p": lambda b: [b, b + "_c"],
    "wait": lambda b: [b],
    "comm": lambda b: [b],
    "manual": lambda b: [b],
}


def read_list(path):
    """(kind, MPI name) pairs in list order; variants not yet filtered."""
    out = []
    with open(path) as f:
        for line in f:
            line = line.split("#", 1)[0].split()
            if not line:
                continue
            kind, bases = line[0], line[1:]
            if kind not in VARIANTS:
                sys.exit(f"gen-wrappers: unknown kind '{kind}' in {path}")
            for b in bases:
                out.extend((kind, "MPI_" + v) for v in VARIANTS[kind](b))
    return out


def read_prototypes(path):
    """name -> parameter text, for every 'int MPI_X(...)' declared in the preprocessed header."""
    text = open(path).read()
    protos = {}
    for m in re.finditer(r"\bint\s+(MPI_\w+)\s*\(([^;{]*?)\)\s*(?:__attribute__\s*\(\(.*?\)\)\s*)*;",
                         text, re.S):
        protos[m.group(1)] = " ".join(m.group(2).split())
    return protos


def split_params(params):
    """Top-level comma split (function-pointer parameters contain commas in parentheses)."""
    depth, cur, out = 0, "", []
    for ch in params:
        if ch == "," and depth == 0:
            out.append(cur.strip())
            cur = ""
            continue
        depth += ch in "([" and 1 or (ch in ")]" and -1 or 0)
        cur += ch
    if cur.strip():
        out.append(cur.strip())
    return out


def param_name(p):
    """The declared name of one parameter: 'const int *array_of_x[]' -> 'array_of_x'."""
    m = re.search(r"(\w+)\s*(\[[^\]]*\]\s*)*$", p)
    if not m:
        sys.exit(f"gen-wrappers: cannot find the name in parameter '{p}'")
    return m.group(1)


def is_persistent(name):
    return name.endswith("_init") or name.endswith("_init_c")


def instance_comm(kind, name, params):
    """The communicator of a collective instance (blocking, the start of a nonblocking one, or
    the creation of a persistent one); MPI_COMM_NULL for everything else."""
    if kind != "collective":
        return "MPI_COMM_NULL"
    for p in params:
        if re.match(r"^MPI_Comm\s+\w+$", p):
            return param_name(p)
    sys.exit(f"gen-wrappers: collective {name} has no MPI_Comm parameter")


def request_param(name, params):
    for p in params:
        if re.match(r"^MPI_Request\s*\*\s*\w+$", p):
            return param_name(p)
    sys.exit(f"gen-wrappers: {name} has no MPI_Request * parameter")


def nonblocking_request(kind, name, params):
    """The request of a nonblocking collective's start (timed to its completion); NULL else."""
    if kind != "collective" or not name.startswith("MPI_I") or is_persistent(name):
        return "NULL"
    return request_param(name, params)


def persistent_request(kind, name, params):
    """The request a persistent collective's _init creates; NULL for every other call."""
    if kind != "collective" or not is_persistent(name):
        return "NULL"
    return request_param(name, params)


def start_requests(kind, name, params):
    """(requests, count) of MPI_Start/MPI_Startall, which start persistent instances."""
    if name == "MPI_Start":
        return ("request", "1")
    if name == "MPI_Startall":
        return ("array_of_requests", "count")
    return ("NULL", "0")


def completed(kind, name, params):
    """What a wait or test call reports as completed (struct nt_done), beyond the requests it
    sets to MPI_REQUEST_NULL: persistent requests stay valid when they complete."""
    if name in ("MPI_Wait", "MPI_Waitall"):
        return "(struct nt_done){ .all = 1 }"
    if name in ("MPI_Test", "MPI_Testall"):
        return "(struct nt_done){ .all = *flag }"
    if name == "MPI_Waitany":
        return "(struct nt_done){ .index = indx }"
    if name == "MPI_Testany":
        return "(struct nt_done){ .index = *flag ? indx : NULL }"
    if name in ("MPI_Waitsome", "MPI_Testsome"):
        return "(struct nt_done){ .outcount = outcount, .indices = array_of_indices }"
    if kind == "wait" and name.startswith(("MPI_Wait", "MPI_Test")):
        sys.exit(f"gen-wrappers: no completion rule for {name}")
    return "(struct nt_done){ 0 }"


def twin_call(kind, name, params, protos):
    """The nonblocking twin of a blocking collective or point-to-point call, started on
    nt_req and waited for by the adaptive wait loop (NOISETOOL_WAIT), when mpi.h declares one
    with the same parameters, less a trailing status, plus a request; else None."""
    if kind not in ("collective", "p2p") or name.startswith("MPI_I") or is_persistent(name):
        return None
    base = name[len("MPI_"):]
    twin = "MPI_I" + base[0].lower() + base[1:]
    if twin not in protos:
        return None
    twin_params = split_params(protos[twin])
    mine = list(params)
    status = None
    if mine and re.match(r"^MPI_Status\s*\*\s*\w+$", mine[-1]):
        status = param_name(mine.pop())
    if [param_name(p) for p in twin_params[:-1]] != [param_name(p) for p in mine] or \
            not re.match(r"^MPI_Request\s*\*\s*\w+$", twin_params[-1]):
        return None
    twin_args = ", ".join([param_name(p) for p in mine] + ["&nt_req"])
    return (f"nt_mpiwait_request(P{twin}({twin_args}), &nt_req, "
            f"{status or 'MPI_STATUS_IGNORE'})")


def choice(kind, name, params, protos):
    """Whether the call runs as it is (the constant true unless it has a twin, or is a wait)."""
    if name in ("MPI_Wait", "MPI_Waitall"):
        return "nt_call_blocking(call.t0_cyc)"
    if twin_call(kind, name, params, protos) is None:
        return "true"
    if kind == "collective":
        return f"nt_coll_blocking({instance_comm(kind, name, params)}, &call.t0_cyc)"
    return "nt_call_blocking(call.t0_cyc)"


def real_call(kind, name, params, protos):
    """The real call: the PMPI function, or (when the choice says so) its nonblocking twin, or
    for wait and waitall a test loop."""
    args = ", ".join(param_name(p) for p in params)
    plain = f"P{name}({args})"
    if name in ("MPI_Wait", "MPI_Waitall"):
        helper = "nt_mpiwait_wait" if name == "MPI_Wait" else "nt_mpiwait_waitall"
        return f"(NT_LIKELY(nt_blocking) ? {plain} : {helper}({args}))"
    twin = twin_call(kind, name, params, protos)
    if twin is None:
        return plain
    return f"(NT_LIKELY(nt_blocking) ? {plain} : {twin})"


def created(kind, name, params, rc):
    """A communicator constructor's registration of what it made (nt_comms_created); empty for
    every other call. Arguments bound by type: the first MPI_Comm is the parent, the MPI_Comm *
    the new communicator, an int tag and a const char *stringtag the tags."""
    if kind != "comm":
        return "(void)0"
    parent = next((param_name(p) for p in params if re.match(r"^MPI_Comm\s+\w+$", p)),
                  "MPI_COMM_NULL")
    newcomm = next((param_name(p) for p in params if re.match(r"^MPI_Comm\s*\*\s*\w+$", p)),
                   None)
    if newcomm is None:
        sys.exit(f"gen-wrappers: constructor {name} has no MPI_Comm * parameter")
    tag = next((param_name(p) for p in params if re.match(r"^int\s+tag$", p)), "0")
    stringtag = next((param_name(p) for p in params
                      if re.match(r"^const\s+char\s*\*\s*stringtag$", p)), "NULL")
    return f"nt_comms_created(NT_FN_{name}, {parent}, {newcomm}, {tag}, {stringtag}, {rc})"


def buffer_size(kind, name, params):
    """(count, datatype) expressions of the call's bytes: the block it sends or receives
    (count x datatype size). A send/receive pair uses the send side, or the receive side
    where the send side is MPI_IN_PLACE or, for scatter, not significant on every rank. Calls
    with count arrays (v and w variants) and calls without a buffer: ("0", MPI_DATATYPE_NULL)."""
    names = set(param_name(p) for p in params)
    if {"count", "datatype"} <= names:
        return ("count", "datatype")
    if {"recvcount", "datatype"} <= names:
        return ("recvcount", "datatype")
    if {"sendcount", "sendtype", "recvcount", "recvtype"} <= names:
        if "Scatter" in name or "scatter" in name:
            return ("(recvbuf == MPI_IN_PLACE ? sendcount : recvcount)",
                    "(recvbuf == MPI_IN_PLACE ? sendtype : recvtype)")
        if "sendbuf" in names:
            return ("(sendbuf == MPI_IN_PLACE ? recvcount : sendcount)",
                    "(sendbuf == MPI_IN_PLACE ? recvtype : sendtype)")
        return ("sendcount", "sendtype")
    return ("0", "MPI_DATATYPE_NULL")


def wait_requests(kind, name, params):
    """(requests, count) of a wait/test call, whose completions end tracked nonblocking
    collectives; ("NULL", "0") for every other call."""
    if kind != "wait" or not re.match(r"^MPI_(Wait|Test)(all|any|some)?$", name):
        return ("NULL", "0")
    reqs = next((param_name(p) for p in params if p.startswith("MPI_Request")), None)
    if reqs is None:
        sys.exit(f"gen-wrappers: {name} has no request parameter")
    if name in ("MPI_Wait", "MPI_Test"):
        return (reqs, "1")
    count = next((param_name(p) for p in params if re.match(r"^int\s+(count|incount)$", p)), None)
    if count is None:
        sys.exit(f"gen-wrappers: {name} has no count parameter")
    return (reqs, count)


def main():
    if len(sys.argv) != 7:
        sys.exit("usage: gen-wrappers.py LIST MPI_H_I TEMPLATE OUT_C OUT_H OUT_SYMBOLS")
    lst, mpi_i, tmpl_path, out_c, out_h, out_syms = sys.argv[1:]
    wanted = read_list(lst)
    protos = read_prototypes(mpi_i)
    template = open(tmpl_path).read()

    kept, exported = [], []
    for kind, name in wanted:
        if name not in protos:
            continue  # this MPI does not declare that variant
        exported.append(name)
        if kind != "manual":
            kept.append((kind, name))
    missing_manual = [n for k, n in wanted if k == "manual" and n not in protos]
    if missing_manual:
        sys.exit("gen-wrappers: mpi.h lacks " + ", ".join(missing_manual))

    with open(out_h, "w") as h:
        h.write("/* Generated by gen-wrappers.py: ids of the wrapped MPI functions. */\n")
        h.write("#ifndef NT_WRAPPER_IDS_H\n#define NT_WRAPPER_IDS_H\n\nenum nt_fn {\n")
        for kind, name in [("manual", n) for k, n in wanted if k == "manual"] + kept:
            h.write(f"\tNT_FN_{name},\n")
        h.write("\tNT_FN_COUNT\n};\n\n")
        h.write("/* Name and kind of each function id. */\n")
        h.write("extern const char *const nt_fn_name[NT_FN_COUNT];\n")
        h.write("extern const unsigned char nt_fn_kind[NT_FN_COUNT];\n\n")
        h.write("enum nt_fn_kind { NT_KIND_COLLECTIVE, NT_KIND_P2P, NT_KIND_WAIT, NT_KIND_COMM,"
                " NT_KIND_MANUAL };\n\n#endif\n")

    kind_enum = {"collective": "NT_KIND_COLLECTIVE", "p2p": "NT_KIND_P2P",
                 "wait": "NT_KIND_WAIT", "comm": "NT_KIND_COMM", "manual": "NT_KIND_MANUAL"}
    with open(out_c, "w") as c:
        c.write("/* Generated by gen-wrappers.py from functions.list, mpi.h and wrapper.c.in. */\n")
        c.write('#include <mpi.h>\n\n#include <noisetool/clock.h>\n\n#include "call.h"\n\n')
        allfns = [("manual", n) for k, n in wanted if k == "manual"] + kept
        c.write("const char *const nt_fn_name[NT_FN_COUNT] = {\n")
        for _, name in allfns:
            c.write(f'\t"{name}",\n')
        c.write("};\n\nconst unsigned char nt_fn_kind[NT_FN_COUNT] = {\n")
        for kind, _ in allfns:
            c.write(f"\t{kind_enum[kind]},\n")
        c.write("};\n")
        for kind, name in kept:
            params = split_params(protos[name])
            if params == ["void"]:
                params = []
            args = ", ".join(param_name(p) for p in params)
            body = (template.replace("@NAME@", name).replace("@KIND@", kind)
                    .replace("@PARAMS@", ", ".join(params) or "void").replace("@ARGS@", args)
                    .replace("@COMM@", instance_comm(kind, name, params))
                    .replace("@NBREQ@", nonblocking_request(kind, name, params))
                    .replace("@WAITREQS@", wait_requests(kind, name, params)[0])
                    .replace("@WAITN@", wait_requests(kind, name, params)[1])
                    .replace("@DONE@", completed(kind, name, params))
                    .replace("@PREQ@", persistent_request(kind, name, params))
                    .replace("@STARTREQS@", start_requests(kind, name, params)[0])
                    .replace("@STARTN@", start_requests(kind, name, params)[1])
                    .replace("@REALCALL@", real_call(kind, name, params, protos))
                    .replace("@CHOICE@", choice(kind, name, params, protos))
                    .replace("@CREATED_PAUSED@", created(kind, name, params, "prc"))
                    .replace("@CREATED@", created(kind, name, params, "rc"))
                    .replace("@COUNT@", "(uint64_t)" + buffer_size(kind, name, params)[0])
                    .replace("@TYPE@", buffer_size(kind, name, params)[1]))
            c.write("\n" + body)

    with open(out_syms, "w") as s:
        s.write("\n".join(sorted(exported)) + "\n")
    print(f"gen-wrappers: {len(kept)} generated wrappers, {len(exported)} exported MPI_ symbols")


if __name__ == "__main__":
    main()
