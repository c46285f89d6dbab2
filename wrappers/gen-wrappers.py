#!/usr/bin/env python3
"""Generate the PMPI wrappers from functions.list, the preprocessed mpi.h and three C templates:
wrapper.c.in (a function's wrapper), and beside it wrapper-fast.c.in (the exported function of
one with a fast path) and wrapper-fortran.c.in (a Fortran entry point, Open MPI).

Each function's parameters are bound by type (CLASSES) and position; what types do not say is
in one table of per-function traits (TRAITS). template_values computes every value a function's
templates take; the writers only fill the templates with them. Writes four files: the wrappers
(C), the function-id header and its tables (C), and the list of every exported MPI_ symbol
(generated and manual) for the symbol test; and for Open MPI the Fortran entry points.
Build-time only; nothing generated is committed.
"""
import os
import re
import sys
from dataclasses import dataclass
from typing import NamedTuple


class Variant(NamedTuple):
    """Which entry point of a base name: its nonblocking start (I<name>), its persistent
    creation (NAME_init), its large-count form (NAME_c), or none of these (NAME)."""
    nonblocking: bool = False
    persistent: bool = False
    large_count: bool = False

    def name(self, base):
        """The MPI name of base's entry point of this variant."""
        name = "I" + base.lower() if self.nonblocking else base
        return "MPI_" + name + ("_init" if self.persistent else "") + \
            ("_c" if self.large_count else "")


BLOCKING, LARGE = Variant(), Variant(large_count=True)
# The entry points each kind of functions.list wraps for a base name, in this order.
VARIANTS = {
    "collective": [BLOCKING, LARGE, Variant(nonblocking=True),
                   Variant(nonblocking=True, large_count=True), Variant(persistent=True),
                   Variant(persistent=True, large_count=True)],
    "p2p": [BLOCKING, LARGE],
    "wait": [BLOCKING],
    "comm": [BLOCKING],
    "manual": [BLOCKING],
}


@dataclass(frozen=True)
class Traits:
    """What the wrappers of a base name need to know that their parameters' types do not say.
    Everything else (communicator, buffers, requests, new communicator) is found by type."""
    # A wait or test call: the requests it completes ("one", or "array" after their count),
    # the roles of its int * parameters in the standard's order, and what it reports completed
    # (struct nt_done, call.h): "all" its requests, "flag" all of them if its flag is set,
    # "index" the one at its index (if its flag, where it has one, is set), "some" those at its
    # indices.
    completes: str = ""
    ints: tuple = ()
    done: str = ""
    # A blocking wait: the adaptive loop (mpiwait.h) that waits for it under NOISETOOL_WAIT.
    wait_loop: str = ""
    # A test call, which may find nothing: a poll (polled) when its flag, else its count, is 0.
    polls: bool = False
    # A start of persistent requests: how many it starts ("one", or "array" after their count).
    starts: str = ""
    # A communicator constructor with a tag, which the standard puts after every other int.
    tagged: bool = False
    # A collective whose send side is significant at the root alone (scatter): its bytes are
    # the receive side's.
    receive_side: bool = False
    # Its Fortran entry point is written by hand in fortran.c (Open MPI), not generated.
    fortran_by_hand: bool = False


# The traits of each base name of functions.list that has any (its variants share them:
# MPI_Iscatter, MPI_Scatter_init and MPI_Scatter_c are MPI_Scatter's); the only place that
# knows an MPI function by its name.
TRAITS = {
    # The wait and test calls.
    "Wait": Traits(completes="one", ints=(), done="all", wait_loop="nt_mpiwait_wait"),
    "Waitall": Traits(completes="array", ints=(), done="all", wait_loop="nt_mpiwait_waitall"),
    "Waitany": Traits(completes="array", ints=("index",), done="index"),
    "Waitsome": Traits(completes="array", ints=("outcount", "indices"), done="some"),
    "Test": Traits(completes="one", ints=("flag",), done="flag", polls=True),
    "Testall": Traits(completes="array", ints=("flag",), done="flag", polls=True),
    "Testany": Traits(completes="array", ints=("index", "flag"), done="index", polls=True),
    "Testsome": Traits(completes="array", ints=("outcount", "indices"), done="some", polls=True),
    # The probes that may find nothing (polls, as the test calls).
    "Iprobe": Traits(ints=("flag",), polls=True),
    "Improbe": Traits(ints=("flag",), polls=True),
    # The starts of persistent requests.
    "Start": Traits(starts="one"),
    "Startall": Traits(starts="array"),
    # The communicator constructors with a tag, and the collectives with a significant receive
    # side.
    "Comm_create_group": Traits(tagged=True),
    "Intercomm_create": Traits(tagged=True),
    "Scatter": Traits(receive_side=True),
    "Scatterv": Traits(receive_side=True),
    # The hand-written Fortran entry points: around the binding's own init and finalize, or
    # acting on what MPI did (the frees).
    "Init": Traits(fortran_by_hand=True),
    "Init_thread": Traits(fortran_by_hand=True),
    "Finalize": Traits(fortran_by_hand=True),
    "Abort": Traits(fortran_by_hand=True),
    "Pcontrol": Traits(fortran_by_hand=True),
    "Comm_free": Traits(fortran_by_hand=True),
    "Comm_disconnect": Traits(fortran_by_hand=True),
    "Type_free": Traits(fortran_by_hand=True),
    "Request_free": Traits(fortran_by_hand=True),
    # ... and around the functions that give MPI a callback (callbacks.c).
    "Grequest_start": Traits(fortran_by_hand=True),
    "Comm_create_errhandler": Traits(fortran_by_hand=True),
    "Win_create_errhandler": Traits(fortran_by_hand=True),
    "File_create_errhandler": Traits(fortran_by_hand=True),
    "Register_datarep": Traits(fortran_by_hand=True),
}


def read_list(path):
    """(kind, base name, variant) of every entry point in list order; variants not yet
    filtered."""
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
                out.extend((kind, b, v) for v in VARIANTS[kind])
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


QUALIFIERS = {"const", "volatile", "struct", "unsigned", "signed", "restrict", "__restrict"}

# What each parameter type is, by its type alone (arrays count as pointers, const is ignored):
# the roles below are found by these classes and by position, never by the header's parameter
# names (MPICH says indx where Open MPI says index, and a header may name none at all).
CLASSES = {
    "void*": "buf", "int": "int", "MPI_Count": "int", "MPI_Aint": "aint",
    "int*": "ints", "MPI_Count*": "ints", "MPI_Aint*": "aints",
    "MPI_Datatype": "type", "MPI_Datatype*": "types", "MPI_Op": "op",
    "MPI_Comm": "comm", "MPI_Comm*": "newcomm", "MPI_Request*": "reqs",
    "MPI_Status*": "status", "MPI_Group": "group", "MPI_Info": "info",
    "MPI_Errhandler": "errhandler", "char*": "string", "MPI_Message*": "message",
}


class Param:
    """One declared parameter: its type as declared (name dropped), array suffix, class and
    the name the generated code gives it (a0, a1, ...)."""

    def __init__(self, fn, pos, text):
        text = " ".join(text.split())
        arr = ""
        m = re.search(r"((?:\[[^\]]*\]\s*)+)$", text)
        if m:
            arr, text = re.sub(r"\s+", "", m.group(1)), text[:m.start()].strip()
        tokens = re.findall(r"[A-Za-z_]\w*|\*", text)
        if len(tokens) >= 2 and tokens[-1] != "*" and (tokens[-2] == "*" or
                                                       tokens[-2] not in QUALIFIERS):
            text = text[:text.rfind(tokens[-1])].strip()  # the header's name for it: dropped
        self.type, self.arr = text, arr
        key = " ".join(w for w in re.findall(r"[A-Za-z_]\w*", text) if w not in QUALIFIERS)
        key += "*" * (text.count("*") + len(re.findall(r"\[", arr)))
        if key not in CLASSES:
            sys.exit(f"gen-wrappers: {fn}: cannot classify parameter {pos + 1} ('{text}{arr}');"
                     " teach CLASSES in gen-wrappers.py what it is")
        self.cls = CLASSES[key]
        self.name = f"a{pos}"

    def decl(self):
        """The parameter as the generated code declares it."""
        sep = "" if self.type.endswith("*") else " "
        return f"{self.type}{sep}{self.name}{self.arr}"


def parse_params(fn, text):
    """The Params of function fn (a name) from mpi.h's parameter text."""
    parts = split_params(text)
    if parts in ([], ["void"]):
        return []
    return [Param(fn, i, p) for i, p in enumerate(parts)]


@dataclass
class Function:
    """One wrapped entry point: its kind and base name in functions.list, its variant, its MPI
    name, its parameters as mpi.h declares them, its base name's traits, and the MPI name of
    its nonblocking twin (or None: find_twin)."""
    kind: str
    base: str
    variant: Variant
    name: str
    params: list
    traits: Traits
    twin: str | None

    def decl(self):
        """The parameter list of its definition."""
        return ", ".join(p.decl() for p in self.params) or "void"

    def args(self):
        """Its parameters' names, as the arguments of a call."""
        return ", ".join(p.name for p in self.params)


def without_status(params):
    """(params less a trailing MPI_Status *, that status's name or None)."""
    if params and params[-1].cls == "status":
        return (params[:-1], params[-1].name)
    return (params, None)


def find_twin(kind, base, variant, params, protos):
    """The nonblocking twin of a blocking collective or point-to-point call, started on
    nt_req and waited for by the adaptive wait loop (NOISETOOL_WAIT), when mpi.h declares one
    with the same parameter types, less a trailing status, plus a request; else None."""
    if kind not in ("collective", "p2p") or variant.nonblocking or variant.persistent:
        return None
    twin = variant._replace(nonblocking=True).name(base)
    if twin not in protos:
        return None
    twin_params = parse_params(twin, protos[twin])
    mine, _ = without_status(params)
    if [(p.type, p.arr) for p in twin_params[:-1]] != [(p.type, p.arr) for p in mine] or \
            not twin_params or twin_params[-1].cls != "reqs":
        return None
    return twin


def make_function(kind, base, variant, protos):
    """The Function of base's entry point of this variant, which mpi.h must declare."""
    name = variant.name(base)
    params = parse_params(name, protos[name])
    traits = TRAITS.get(base, Traits())
    if kind == "wait" and not (traits.completes or traits.starts):
        sys.exit(f"gen-wrappers: {name}: a wait call needs its traits in TRAITS (what it "
                 "completes or starts)")
    return Function(kind, base, variant, name, params, traits,
                    find_twin(kind, base, variant, params, protos))


def of_class(params, cls):
    """The names of params of class cls (CLASSES), in order."""
    return [p.name for p in params if p.cls == cls]


def one_of_class(fn, cls, what):
    """The name of fn's one parameter of class cls (a what, for the message); stops the
    generator where mpi.h declares none or several."""
    found = of_class(fn.params, cls)
    if len(found) != 1:
        sys.exit(f"gen-wrappers: {fn.name}: expected one {what} parameter, mpi.h declares "
                 f"{len(found)}")
    return found[0]


def instance_comm(fn):
    """The communicator of a collective instance (blocking, the start of a nonblocking one, or
    the creation of a persistent one); MPI_COMM_NULL for everything else."""
    if fn.kind != "collective":
        return "MPI_COMM_NULL"
    return one_of_class(fn, "comm", "MPI_Comm")


def request_param(fn):
    """The name of fn's one MPI_Request * parameter."""
    return one_of_class(fn, "reqs", "MPI_Request *")


def nonblocking_request(fn):
    """The request of a nonblocking collective's start (timed to its completion); NULL else."""
    if fn.kind != "collective" or not fn.variant.nonblocking:
        return "NULL"
    return request_param(fn)


def persistent_request(fn):
    """The request a persistent collective's _init creates; NULL for every other call."""
    if fn.kind != "collective" or not fn.variant.persistent:
        return "NULL"
    return request_param(fn)


def requests(fn, how):
    """(requests, count) of a call that completes or starts requests (its traits' completes or
    starts: how): "one" request, or an "array" after their count, its first parameter;
    ("NULL", "0") where how is empty."""
    if not how:
        return ("NULL", "0")
    reqs = request_param(fn)
    if how == "one":
        return (reqs, "1")
    ints = of_class(fn.params, "int")
    if not ints or fn.params[0].name != ints[0]:
        sys.exit(f"gen-wrappers: {fn.name}: its first parameter is not the request count")
    return (reqs, ints[0])


def wait_requests(fn):
    """(requests, count) of a wait/test call, whose completions end tracked nonblocking
    collectives; ("NULL", "0") for every other call."""
    return requests(fn, fn.traits.completes)


def start_requests(fn):
    """(requests, count) of MPI_Start/MPI_Startall, which start persistent instances."""
    return requests(fn, fn.traits.starts)


def wait_ints(fn):
    """role -> parameter of a wait or test call's int * parameters, by position (its traits'
    ints)."""
    ints = of_class(fn.params, "ints")
    roles = fn.traits.ints
    if len(ints) != len(roles):
        sys.exit(f"gen-wrappers: {fn.name}: TRAITS names {len(roles)} int * parameters, "
                 f"mpi.h declares {len(ints)}")
    return dict(zip(roles, ints))


def completed(fn):
    """What a wait or test call reports as completed (struct nt_done), beyond the requests it
    sets to MPI_REQUEST_NULL: persistent requests stay valid when they complete."""
    if not fn.traits.completes:
        return "(struct nt_done){ 0 }"
    r, done = wait_ints(fn), fn.traits.done
    if done == "all":
        return "(struct nt_done){ .all = 1 }"
    if done == "flag":
        return f"(struct nt_done){{ .all = *{r['flag']} }}"
    if done == "index" and "flag" in r:
        return f"(struct nt_done){{ .index = *{r['flag']} ? {r['index']} : NULL }}"
    if done == "index":
        return f"(struct nt_done){{ .index = {r['index']} }}"
    return f"(struct nt_done){{ .outcount = {r['outcount']}, .indices = {r['indices']} }}"


def poll_at(fn):
    """A test call's flag, else its count: where it says whether it found something; NULL for
    every other call."""
    if not fn.traits.polls:
        return "NULL"
    r = wait_ints(fn)
    return r["flag"] if "flag" in r else r["outcount"]


def polled(fn, rc, fortran=False):
    """Whether a test call that returned rc found nothing (a poll: call.h, nt_fast_p2p_end), as
    a C expression; "false" for every other call. Its flag or count is read only once MPI
    accepted the call (a refused call may have been given NULL)."""
    if not fn.traits.polls:
        return "false"
    cast = "(const MPI_Fint *)" if fortran else ""
    return f"({rc} == MPI_SUCCESS && *{cast}{poll_at(fn)} == 0)"


def twin_call(fn):
    """The call of fn's nonblocking twin (find_twin) on nt_req, and the adaptive loop's wait
    for it."""
    mine, status = without_status(fn.params)
    twin_args = ", ".join([p.name for p in mine] + ["&nt_req"])
    return (f"nt_mpiwait_request(P{fn.twin}({twin_args}), &nt_req, "
            f"{status or 'MPI_STATUS_IGNORE'})")


def choice(fn):
    """Whether the call runs as it is (the constant true unless it has a twin, or is a wait)."""
    if fn.traits.wait_loop:
        return "nt_call_blocking(call.t0_cyc)"
    if fn.twin is None:
        return "true"
    if fn.kind == "collective":
        return f"nt_coll_blocking({instance_comm(fn)}, &call.t0_cyc)"
    return "nt_call_blocking(call.t0_cyc)"


def real_call(fn):
    """The real call: the PMPI function, or (when the choice says so) its nonblocking twin, or
    for wait and waitall a test loop."""
    plain = f"P{fn.name}({fn.args()})"
    if fn.traits.wait_loop:
        return f"(NT_LIKELY(nt_blocking) ? {plain} : {fn.traits.wait_loop}({fn.args()}))"
    if fn.twin is None:
        return plain
    return f"(NT_LIKELY(nt_blocking) ? {plain} : {twin_call(fn)})"


def created(fn, rc, newcomm=None):
    """A communicator constructor's registration of what it made (nt_comms_created); empty for
    every other call. Arguments bound by type: the first MPI_Comm is the parent, the MPI_Comm *
    the new communicator (or newcomm, where given), the last int the tag (of the constructors
    that have one) and the const char * the string tag."""
    if fn.kind != "comm":
        return "(void)0"
    parent = (of_class(fn.params, "comm") or ["MPI_COMM_NULL"])[0]
    newcomm = newcomm or one_of_class(fn, "newcomm", "MPI_Comm *")
    tag = of_class(fn.params, "int")[-1] if fn.traits.tagged else "0"
    stringtag = (of_class(fn.params, "string") or ["NULL"])[0]
    return f"nt_comms_created(NT_FN_{fn.name}, {parent}, {newcomm}, {tag}, {stringtag}, {rc})"


def buffer_size(fn):
    """(count, datatype) expressions of the call's bytes: the block it sends or receives
    (count x datatype size), found as a count followed by a datatype. A call with one such
    pair uses it; one with two (send side, receive side) the send side, or the receive side
    where the send side is MPI_IN_PLACE or, for scatter, not significant on every rank. Calls
    with count or datatype arrays (v and w variants) and calls without a buffer:
    ("0", MPI_DATATYPE_NULL)."""
    params = fn.params
    pairs = [i for i in range(len(params) - 1)
             if params[i].cls == "int" and params[i + 1].cls == "type"]
    ntypes = len(of_class(params, "type")) + len(of_class(params, "types"))
    if not pairs or len(pairs) != ntypes or len(pairs) > 2:
        return ("0", "MPI_DATATYPE_NULL")
    if len(pairs) == 1:
        i = pairs[0]
        return (params[i].name, params[i + 1].name)
    s, r = pairs
    scount, stype = params[s].name, params[s + 1].name
    rcount, rtype = params[r].name, params[r + 1].name
    if s == 0 or r == 0 or params[s - 1].cls != "buf" or params[r - 1].cls != "buf":
        sys.exit(f"gen-wrappers: {fn.name}: a count and datatype pair without its buffer")
    sbuf, rbuf = params[s - 1].name, params[r - 1].name
    if fn.traits.receive_side:
        return (f"({rbuf} == MPI_IN_PLACE ? {scount} : {rcount})",
                f"({rbuf} == MPI_IN_PLACE ? {stype} : {rtype})")
    return (f"({sbuf} == MPI_IN_PLACE ? {rcount} : {scount})",
            f"({sbuf} == MPI_IN_PLACE ? {rtype} : {stype})")


# Fortran entry points (wrapper-fortran.c.in; Open MPI only). Fortran passes hidden string
# lengths: a function with a string parameter gets none.
F_NO_WRAPPER = ("string",)


def fortran_ok(fn):
    """Whether fn gets a generated Fortran entry point."""
    return (fn.kind != "manual" and not fn.variant.large_count and
            not any(p.cls in F_NO_WRAPPER for p in fn.params))


def f_int(p):
    """The C int that the Fortran integer at address p holds."""
    return f"(int)*(const MPI_Fint *){p}"


def f_expr(fn, expr):
    """A C wrapper's expression with each parameter aN replaced by its C value: handles through
    f2c, integers read, buffers compared with Fortran's MPI_IN_PLACE."""
    by_name = {p.name: p for p in fn.params}

    def sub(m):
        p = by_name.get(m.group(0))
        if p is None:
            return m.group(0)
        if p.cls == "comm":
            return f"MPI_Comm_f2c(*(const MPI_Fint *){p.name})"
        if p.cls == "type":
            return f"MPI_Type_f2c(*(const MPI_Fint *){p.name})"
        if p.cls == "int":
            return f_int(p.name)
        if p.cls == "buf":
            return f"({p.name} == NT_F_IN_PLACE ? MPI_IN_PLACE : {p.name})"
        sys.exit(f"gen-wrappers: {fn.name}: no Fortran conversion for parameter {p.name} "
                 f"({p.cls})")
    return re.sub(r"\ba\d+\b", sub, expr)


def fortran_completed(fn):
    """What a wait or test call reports completed, from Fortran (struct nt_done of C indices),
    and the statements that convert its index or indices to C ones first."""
    if not fn.traits.completes:
        return ("(struct nt_done){ 0 }", [])
    r, done = wait_ints(fn), fn.traits.done
    if done == "all":
        return ("(struct nt_done){ .all = 1 }", [])
    if done == "flag":
        return (f"(struct nt_done){{ .all = *(const MPI_Fint *){r['flag']} }}", [])
    if done == "index":
        flag = f"*(const MPI_Fint *){r['flag']} && " if "flag" in r else ""
        return (f"(struct nt_done){{ .index = {flag}nt_index != MPI_UNDEFINED ? &nt_index : "
                "NULL }",
                [f"int nt_index = nt_f_index(*(const MPI_Fint *){r['index']});"])
    return (f"(struct nt_done){{ .outcount = nt_indices ? {r['outcount']} : NULL, "
            f".indices = nt_indices }}",
            [f"const int *nt_indices = nt_f_indices({r['indices']}, "
             f"*(const MPI_Fint *){r['outcount']});"])


def fortran_values(fn, c):
    """The values of fn's Fortran entry point (wrapper-fortran.c.in), from its C wrapper's (c),
    and the binding's entry points it calls, as (Fortran name, parameters) pairs."""
    lname = fn.name.lower()
    fparams = ", ".join([f"void *{p.name}" for p in fn.params] + ["MPI_Fint *ierr"])
    fargs = ", ".join([p.name for p in fn.params] + ["ierr"])
    comm = f_expr(fn, c["COMM"])
    before, after, nbreq = [], [], "NULL"
    if c["NBREQ"] != "NULL":
        after.append(f"MPI_Request nt_creq = *ierr == MPI_SUCCESS ? "
                     f"MPI_Request_f2c(*(const MPI_Fint *){c['NBREQ']}) : MPI_REQUEST_NULL;")
        nbreq = "&nt_creq"
    waitreqs, waitn = "NULL", "0"
    done, indices = fortran_completed(fn)
    if c["WAITREQS"] != "NULL":
        before += ["MPI_Request *nt_creqs = NULL;",
                   f"int nt_n = nt_f_requests({c['WAITREQS']}, {f_expr(fn, c['WAITN'])}, "
                   "&nt_creqs);"]
        after += [f"nt_f_requests({c['WAITREQS']}, nt_n, &nt_creqs);"] + indices
        waitreqs, waitn = "nt_creqs", "nt_n"
    created_call = "(void)0"
    if fn.kind == "comm":
        newcomm = one_of_class(fn, "newcomm", "MPI_Comm *")
        created_call = (f"{{ MPI_Comm nt_cnew = *ierr == MPI_SUCCESS ? "
                        f"MPI_Comm_f2c(*(const MPI_Fint *){newcomm}) : MPI_COMM_NULL; "
                        f"{f_expr(fn, created(fn, '*ierr', '&nt_cnew'))}; }}")
    binding = [(lname, fparams)]
    real, choice_expr = f"NT_F_CALL({lname}, {fargs});", "true"
    if fn.kind == "collective" and fn.twin:
        tname = fn.twin.lower()  # MPI_Allreduce -> mpi_iallreduce
        targs = ", ".join([p.name for p in fn.params] + ["&nt_freq", "ierr"])
        real = (f"if (NT_LIKELY(nt_blocking)) {{ {real} }} else {{ "
                f"MPI_Fint nt_freq; NT_F_CALL({tname}, {targs}); "
                f"MPI_Request nt_req = MPI_Request_f2c(nt_freq); "
                f"*ierr = nt_mpiwait_request(*ierr, &nt_req, MPI_STATUS_IGNORE); }}")
        choice_expr = f"nt_coll_blocking({comm}, &call.t0_cyc)"
        binding.append((tname, ", ".join([f"void *{p.name}" for p in fn.params] +
                                         ["MPI_Fint *", "MPI_Fint *"])))
    values = {"NAME": fn.name, "KIND": fn.kind, "FNAME": lname, "FPARAMS": fparams,
              "FARGS": fargs, "CREATED": created_call,
              "POLLED": polled(fn, "(int)*ierr", fortran=True),
              "F2C_BEFORE": "".join(line + "\n\t" for line in before),
              "WAITREQS": waitreqs, "WAITN": waitn, "CHOICE": choice_expr, "REALCALL": real,
              "F2C_AFTER": "".join(line + "\n\t" for line in after), "DONE": done,
              "COMM": comm, "NBREQ": nbreq,
              "COUNT": f_expr(fn, c["COUNT"]), "TYPE": f_expr(fn, c["TYPE"])}
    return (values, binding)


def has_fast_path(fn):
    """Whether the wrapper is simple enough for a fast path: a blocking collective, a
    point-to-point call, a wait or test call that starts no persistent collective."""
    return (fn.kind in ("collective", "p2p", "wait") and
            nonblocking_request(fn) == "NULL" and
            persistent_request(fn) == "NULL" and
            start_requests(fn)[1] == "0" and
            created(fn, "rc") == "(void)0")


def c_bool(b):
    """A Python truth value as C's."""
    return "true" if b else "false"


def template_values(fn, fast_index):
    """Every value fn's templates need, by template: "wrapper" (wrapper.c.in); for a function
    with a fast path (fast_index: has_fast_path) "fast" (wrapper-fast.c.in); for one with a
    Fortran entry point (fortran_ok) "fortran" (wrapper-fortran.c.in), and "binding", the
    Fortran binding's entry points that one calls ((name, parameters) pairs)."""
    name = fn.name
    fast = name in fast_index
    comm = instance_comm(fn)
    count, dtype = buffer_size(fn)
    waitreqs, waitn = wait_requests(fn)
    startreqs, startn = start_requests(fn)
    common = {"NAME": name, "PARAMS": fn.decl(), "ARGS": fn.args(), "COMM": comm,
              "COUNT": "(uint64_t)" + count, "TYPE": dtype}
    values = {"wrapper": dict(
        common, KIND=fn.kind,
        LINKAGE="static __attribute__((noinline))" if fast else "NT_MPI_API",
        FUNCTION="nt_generic_" + name if fast else name,
        RETURN_ADDRESS_DECL="void *nt_ret = nt_thread_.generic_ret;" if fast else "",
        RETURN_ADDRESS="nt_ret" if fast else "__builtin_return_address(0)",
        FASTDOC=("the caches' lookup before the real call, the real call between two raw "
                 "counter reads, the books after it; the exported function holds only that, "
                 "and nt_generic_" + name + " the rest") if fast else "it has none",
        NBREQ=nonblocking_request(fn), PREQ=persistent_request(fn),
        WAITREQS=waitreqs, WAITN=waitn, DONE=completed(fn),
        STARTREQS=startreqs, STARTN=startn,
        CHOICE=choice(fn), REALCALL=real_call(fn),
        CREATED=created(fn, "rc"), CREATED_PAUSED=created(fn, "prc"),
        POLLED=polled(fn, "rc"))}
    if fast:
        collective = comm != "MPI_COMM_NULL"
        typed = c_bool(dtype != "MPI_DATATYPE_NULL")
        values["fast"] = dict(
            common, WAITS=c_bool(fn.kind == "wait"), FAST_INDEX=str(fast_index[name]),
            COLLECTIVE=c_bool(collective), TYPED=typed,
            POLLS=c_bool(fn.traits.polls), POLL_AT=poll_at(fn),
            REAL=f"nt_gate_.real.{name}" if fn.traits.polls else "P" + name,
            FAST_END=(f"nt_fast_coll_end(nt_t, nt_s, {typed}, t1, frc)" if collective else
                      f"nt_fast_poll_end(nt_t, {fast_index[name]}, t1, frc)" if fn.traits.polls else
                      f"nt_fast_p2p_end(nt_t, nt_s, {typed}, t0, t1, frc)"))
    if fortran_ok(fn):
        values["fortran"], values["binding"] = fortran_values(fn, values["wrapper"])
    return values


PLACEHOLDER = re.compile(r"@([A-Z][A-Z0-9_]*)@")


class Template:
    """A C template (wrapper*.c.in): C with @PLACEHOLDER@s, read from path. Its opening comment
    says what each placeholder is and is not copied, nor the blank line after it."""

    def __init__(self, path):
        self.name = os.path.basename(path)
        with open(path) as f:
            head, sep, self.text = f.read().partition("*/\n\n")
        if not head.startswith("/*") or not sep:
            sys.exit(f"gen-wrappers: {self.name}: no opening comment on its placeholders")
        told, used = set(PLACEHOLDER.findall(head)), set(PLACEHOLDER.findall(self.text))
        if told != used:
            sys.exit(f"gen-wrappers: {self.name}: its opening comment does not say what these "
                     "placeholders are: " + ", ".join(sorted(told ^ used)))

    def fill(self, fn, values):
        """The text with each @KEY@ replaced by values[KEY], for function fn (a name); stops
        the generator on a placeholder without a value, or a value no placeholder takes."""
        used = set()

        def value(m):
            if m.group(1) not in values:
                sys.exit(f"gen-wrappers: {fn}: {self.name}: no value for @{m.group(1)}@")
            used.add(m.group(1))
            return values[m.group(1)]
        text = PLACEHOLDER.sub(value, self.text)
        if used != set(values):
            sys.exit(f"gen-wrappers: {fn}: {self.name} has no place for " +
                     ", ".join(sorted(set(values) - used)))
        return text


def find_functions(wanted, protos):
    """(the manual functions' names, a Function for every other entry point in wanted that mpi.h
    declares), in list order; stops the generator where mpi.h lacks a manual function or TRAITS
    names a base name functions.list does not."""
    unlisted = sorted(set(TRAITS) - {base for _, base, _ in wanted})
    if unlisted:
        sys.exit("gen-wrappers: TRAITS names what functions.list does not: " + ", ".join(unlisted))
    manual = [variant.name(base) for kind, base, variant in wanted if kind == "manual"]
    missing_manual = [n for n in manual if n not in protos]
    if missing_manual:
        sys.exit("gen-wrappers: mpi.h lacks " + ", ".join(missing_manual))
    kept = [make_function(kind, base, variant, protos) for kind, base, variant in wanted
            if kind != "manual" and variant.name(base) in protos]  # else not in this MPI
    return (manual, kept)


def write_ids_header(path, ids, fast_count, polls):
    """The function ids (ids: (kind, name) pairs, in id order), the tables' declarations and
    the list of polls (the test and probe Functions with a fast path)."""
    with open(path, "w") as h:
        h.write("/* Generated by gen-wrappers.py: ids of the wrapped MPI functions. */\n")
        h.write("#ifndef NT_WRAPPER_IDS_H\n#define NT_WRAPPER_IDS_H\n\nenum nt_fn {\n")
        for _, name in ids:
            h.write(f"\tNT_FN_{name},\n")
        h.write("\tNT_FN_COUNT\n};\n\n")
        h.write("/* Name and kind of each function id. */\n")
        h.write("extern const char *const nt_fn_name[NT_FN_COUNT];\n")
        h.write("extern const unsigned char nt_fn_kind[NT_FN_COUNT];\n\n")
        h.write("/* The functions with a fast path (call.h): their places in the thread's memo\n"
                " * of sites; nt_fn_fast[fn] is fn's, or -1. */\n")
        h.write(f"#define NT_FAST_COUNT {fast_count}\n")
        h.write("extern const short nt_fn_fast[NT_FN_COUNT];\n\n")
        h.write("/* The test and probe functions with a fast path, X(name, parameters) each: their\n"
                " * real calls wait beside the fast path's gate (thread.h: nt_gate_). */\n")
        h.write("#define NT_POLL_REALS(X)" +
                "".join(f" \\\n\tX({fn.name}, ({fn.decl()}))" for fn in polls) + "\n\n")
        h.write("enum nt_fn_kind { NT_KIND_COLLECTIVE, NT_KIND_P2P, NT_KIND_WAIT, NT_KIND_COMM,"
                " NT_KIND_MANUAL };\n\n#endif\n")


KIND_ENUM = {"collective": "NT_KIND_COLLECTIVE", "p2p": "NT_KIND_P2P", "wait": "NT_KIND_WAIT",
             "comm": "NT_KIND_COMM", "manual": "NT_KIND_MANUAL"}


def write_ids_tables(path, header, ids, fast_index):
    """The name, kind and fast-path place of each function id (ids as write_ids_header's)."""
    with open(path, "w") as c:
        c.write("/* Generated by gen-wrappers.py: names, kinds and fast-path places of the wrapped\n"
                " * MPI functions. */\n")
        c.write(f'#include "{header}"\n\n')
        c.write("const char *const nt_fn_name[NT_FN_COUNT] = {\n")
        for _, name in ids:
            c.write(f'\t"{name}",\n')
        c.write("};\n\nconst unsigned char nt_fn_kind[NT_FN_COUNT] = {\n")
        for kind, _ in ids:
            c.write(f"\t{KIND_ENUM[kind]},\n")
        c.write("};\n\nconst short nt_fn_fast[NT_FN_COUNT] = {\n")
        for _, name in ids:
            c.write(f"\t{fast_index.get(name, -1)},\n")
        c.write("};\n")


def write_wrappers(path, templates, kept, values):
    """The C wrappers of kept (values: each one's template_values)."""
    with open(path, "w") as c:
        c.write("/* Generated by gen-wrappers.py from functions.list, mpi.h and wrapper.c.in. */\n")
        c.write('#include <mpi.h>\n\n#include <noisetool/clock.h>\n\n#include "call.h"\n')
        for fn, v in zip(kept, values):
            c.write("\n" + templates["wrapper"].fill(fn.name, v["wrapper"]))
            if "fast" in v:
                c.write(templates["fast"].fill(fn.name, v["fast"]))


def write_fortran(path, template, kept, values):
    """The Fortran entry points (Open MPI) of kept (values: each one's template_values);
    returns their names."""
    bodies, binding, names = [], {}, []
    for fn, v in zip(kept, values):
        if "fortran" in v:
            bodies.append("\n" + template.fill(fn.name, v["fortran"]))
            binding.update(v["binding"])
            names.append(v["fortran"]["FNAME"] + "_")
    with open(path, "w") as f:
        f.write("/* Generated by gen-wrappers.py: the Fortran entry points (Open MPI). */\n")
        f.write('#include <mpi.h>\n\n#include <noisetool/clock.h>\n\n#include "call.h"\n'
                '#include "fortran.h"\n\n')
        f.write("/* The binding's own entry points (pmpi_x_), found on first use. */\n")
        for lname, params in binding.items():
            f.write(f"NT_F_REAL({lname}, {params});\n")
        f.write("".join(bodies))
    return names


def main():
    """gen-wrappers.py LIST MPI_H_I TEMPLATE OUT_C OUT_H OUT_IDS_C OUT_SYMBOLS [OUT_FORTRAN]"""
    if len(sys.argv) not in (8, 9):
        sys.exit("usage: gen-wrappers.py LIST MPI_H_I TEMPLATE OUT_C OUT_H OUT_IDS_C OUT_SYMBOLS "
                 "[OUT_FORTRAN]")
    lst, mpi_i, tmpl_path, out_c, out_h, out_ids_c, out_syms = sys.argv[1:8]
    here = os.path.dirname(tmpl_path)  # the other templates lie beside the first
    templates = {"wrapper": Template(tmpl_path),
                 "fast": Template(os.path.join(here, "wrapper-fast.c.in")),
                 "fortran": Template(os.path.join(here, "wrapper-fortran.c.in"))}
    manual, kept = find_functions(read_list(lst), read_prototypes(mpi_i))
    fast_index = {}  # name -> its place in the thread's memo of fast-path sites (call.h)
    for fn in kept:
        if has_fast_path(fn):
            fast_index[fn.name] = len(fast_index)
    values = [template_values(fn, fast_index) for fn in kept]

    ids = [("manual", name) for name in manual] + [(fn.kind, fn.name) for fn in kept]
    polls = [fn for fn in kept if fn.name in fast_index and fn.traits.polls]
    write_ids_header(out_h, ids, len(fast_index), polls)
    write_ids_tables(out_ids_c, os.path.basename(out_h), ids, fast_index)
    write_wrappers(out_c, templates, kept, values)
    exported = manual + [fn.name for fn in kept]
    if len(sys.argv) == 9:
        exported += write_fortran(sys.argv[8], templates["fortran"], kept, values)
        exported += [f"mpi_{base.lower()}_" for base, traits in TRAITS.items()
                     if traits.fortran_by_hand]
    with open(out_syms, "w") as s:
        s.write("\n".join(sorted(exported)) + "\n")
    print(f"gen-wrappers: {len(kept)} generated wrappers, {len(exported)} exported MPI_ symbols")


if __name__ == "__main__":
    main()
