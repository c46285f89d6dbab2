/* Python call sites: the calling thread's innermost Python frame, read without the GIL from
 * CPython 3.11's own structures (doc/python.md). */
#include "nt-config.h"

#include <dlfcn.h>
#include <stddef.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <noisetool/common.h>
#include <noisetool/ntlog.h>

#include "live.h"
#include "pysite.h"
#include "sites.h"

#define NT_TLS __thread __attribute__((tls_model("initial-exec")))

enum {
	POOL_PER_SITE = 96,         /* bytes of names per site-table slot */
	MAX_FRAMES = 64,            /* incomplete frames skipped at most */
	MAX_INSTR = 1 << 20,        /* code units of a code object a key can name */
};

static char *pool;              /* entries: u32 hash, u32 length, the bytes, NUL; 8-aligned */
static size_t pool_bytes, pool_used;
static unsigned pool_gen;       /* bumped by each pool_init: the per-thread caches forget */
static uint64_t unnamed;         /* calls sited at their C site for want of room */
static int pool_full;             /* a name found no room: no more are tried */
static pthread_mutex_t pool_lock = PTHREAD_MUTEX_INITIALIZER;

size_t nt_pysite_pool_bytes(size_t capacity)
{
	return capacity * POOL_PER_SITE; /* linear: the arena plans in bytes per slot */
}

void nt_pysite_pool_init(void *mem, size_t bytes)
{
	pool = mem;
	pool_bytes = mem ? bytes : 0;
	pool_used = 0;
	unnamed = 0;
	pool_full = 0;
	__atomic_add_fetch(&pool_gen, 1, __ATOMIC_RELEASE);
	nt_live_python_names(mem, pool_bytes, NT_LIVE_FIELD(struct nt_site, py_name),
			     NT_LIVE_FIELD(struct nt_site, py_line));
}

uint64_t nt_pysite_unnamed(void)
{
	return __atomic_load_n(&unnamed, __ATOMIC_RELAXED);
}

const char *nt_pysite_module(const struct nt_site *s)
{
	if (!s->py_name || !pool || s->py_name - 1 >= pool_bytes)
		return NULL;
	return pool + s->py_name - 1;
}

#if NT_HAVE_PYTHON
/* CPython 3.11's frame layout (_PyInterpreterFrame, _PyCFrame) is in its internal headers. */
#define Py_BUILD_CORE 1
#define NEED_OPCODE_TABLES 1 /* our own _PyOpcode_Deopt and _PyOpcode_Caches: not exported */
#include <Python.h>
#include <internal/pycore_frame.h>
#include <internal/pycore_opcode.h>

typedef PyThreadState *(*tstate_fn)(void);
typedef int (*addr2line_fn)(PyCodeObject *, int);
typedef int (*addr2loc_fn)(PyCodeObject *, int, int *, int *, int *, int *);

static tstate_fn this_tstate;   /* PyGILState_GetThisThreadState: a TSS read, no GIL */
static addr2line_fn addr2line;  /* PyCode_Addr2Line: reads co_linetable, allocates nothing */
static addr2loc_fn addr2loc;    /* PyCode_Addr2Location: the same, with PEP 657 columns */

void nt_pysite_init(int rank)
{
	this_tstate = NULL;
	tstate_fn ts = (tstate_fn)dlsym(RTLD_DEFAULT, "PyGILState_GetThisThreadState");
	if (!ts)
		return; /* not a Python process */
	/* NOISETOOL_PYTHON_SITES=0: the extension modules' C call sites, as without this file
	 * (bench/bench-python.sh measures what the frame reads cost against them). */
	const char *want = getenv("NOISETOOL_PYTHON_SITES");
	if (want && strcmp(want, "1") != 0) {
		if (strcmp(want, "0") != 0 && rank == 0)
			fprintf(stderr, "noisetool: NOISETOOL_PYTHON_SITES=%.32s: expected 0 or 1; "
					"Python call sites are off\n", want);
		return;
	}
	/* Py_Version (3.11 on) is the running interpreter's PY_VERSION_HEX; before 3.11 it does
	 * not exist, and the version string says which. */
	const unsigned long *hex = dlsym(RTLD_DEFAULT, "Py_Version");
	const char *(*version)(void) = (const char *(*)(void))dlsym(RTLD_DEFAULT, "Py_GetVersion");
	addr2line_fn a2l = (addr2line_fn)dlsym(RTLD_DEFAULT, "PyCode_Addr2Line");
	bool readable = hex && (*hex >> 16) == (PY_VERSION_HEX >> 16) && a2l;
	if (!readable) {
		if (rank == 0)
			fprintf(stderr,
				"noisetool: Python %.16s: call sites are named in the Python extension "
				"modules' C code (Python %d.%d call sites need Python %d.%d)\n",
				version ? version() : "?", PY_MAJOR_VERSION, PY_MINOR_VERSION,
				PY_MAJOR_VERSION, PY_MINOR_VERSION);
		return;
	}
	addr2line = a2l;
	addr2loc = (addr2loc_fn)dlsym(RTLD_DEFAULT, "PyCode_Addr2Location"); /* NULL: no call names */
	this_tstate = ts;
}

bool nt_pysite_is_python(uintptr_t ret)
{
	if (!this_tstate)
		return false;
	/* A Python extension module exports PyInit_NAME, NAME its file name up to the first
	 * dot (MPI.cpython-311-x86_64-linux-gnu.so: PyInit_MPI). */
	Dl_info info;
	if (!dladdr((void *)ret, &info) || !info.dli_fname || !*info.dli_fname)
		return false;
	const char *base = strrchr(info.dli_fname, '/') ? strrchr(info.dli_fname, '/') + 1
							 : info.dli_fname;
	char sym[256];
	size_t n = strcspn(base, ".");
	if (n == 0 || n > sizeof sym - 8)
		return false;
	snprintf(sym, sizeof sym, "PyInit_%.*s", (int)n, base);
	void *h = dlopen(info.dli_fname, RTLD_LAZY | RTLD_NOLOAD);
	if (!h)
		return false;
	bool python = dlsym(h, sym) != NULL;
	dlclose(h);
	return python;
}

/* The calling thread's innermost complete Python frame: its code object and instruction (the
 * CALL now running), or false. Only this thread changes its frame chain, and the frames
 * under a running call keep their code objects alive, so the reads need no GIL. */
static bool innermost(PyCodeObject **code, int *instr)
{
	PyThreadState *ts = this_tstate();
	if (!ts || !ts->cframe)
		return false;
	_PyInterpreterFrame *f = ts->cframe->current_frame;
	for (int n = 0; f && n < MAX_FRAMES; n++, f = f->previous) {
		PyCodeObject *co = f->f_code;
		if (!co)
			return false;
		/* _PyFrame_IsIncomplete: a frame still being set up names no line. */
		_Py_CODEUNIT *first = _PyCode_CODE(co);
		if (f->owner != FRAME_OWNED_BY_GENERATOR &&
		    f->prev_instr < first + co->_co_firsttraceable)
			continue;
		ptrdiff_t i = f->prev_instr - first;
		if (i < 0 || i >= MAX_INSTR)
			return false;
		*code = co;
		*instr = (int)i;
		return true;
	}
	return false;
}

/* The key of (code, instr): exact, not a hash (code objects are 8-aligned below 2^47). 0 when
 * they do not fit. */
static uintptr_t key_of(const PyCodeObject *code, int instr)
{
	uintptr_t c = (uintptr_t)code;
	if (c & 7 || c >> 47)
		return 0;
	return (c >> 3) | ((uintptr_t)instr << 44);
}

/* Append s[0..n) to out (at *at, cap bytes), each NUL as '?' and with ':' as '?' when colon
 * is false (a function's name is ended by the first colon). */
static bool put(char *out, size_t cap, size_t *at, const char *s, size_t n, bool colon)
{
	if (n > cap - *at)
		return false;
	for (size_t i = 0; i < n; i++)
		out[(*at)++] = s[i] == '\0' || (!colon && s[i] == ':') ? '?' : s[i];
	return true;
}

/* The UTF-8 of a ready compact str (code objects' names and file names are), without
 * allocating: ASCII as it is, else its cached UTF-8, else encoded here. */
static bool put_str(char *out, size_t cap, size_t *at, PyObject *o, bool colon)
{
	if (!o || !PyUnicode_Check(o))
		return false;
	PyASCIIObject *a = (PyASCIIObject *)o;
	if (!a->state.compact || !a->state.ready)
		return false;
	size_t len = (size_t)a->length;
	if (a->state.ascii)
		return put(out, cap, at, (const char *)(a + 1), len, colon);
	PyCompactUnicodeObject *c = (PyCompactUnicodeObject *)o;
	if (c->utf8)
		return put(out, cap, at, c->utf8, (size_t)c->utf8_length, colon);
	const void *data = c + 1;
	for (size_t i = 0; i < len; i++) {
		Py_UCS4 u = a->state.kind == PyUnicode_1BYTE_KIND ? ((const Py_UCS1 *)data)[i]
			  : a->state.kind == PyUnicode_2BYTE_KIND ? ((const Py_UCS2 *)data)[i]
								  : ((const Py_UCS4 *)data)[i];
		char b[4];
		size_t m;
		if (u < 0x80) {
			b[0] = (char)u;
			m = 1;
		} else if (u < 0x800) {
			b[0] = (char)(0xc0 | u >> 6);
			b[1] = (char)(0x80 | (u & 0x3f));
			m = 2;
		} else if (u < 0x10000) {
			b[0] = (char)(0xe0 | u >> 12);
			b[1] = (char)(0x80 | (u >> 6 & 0x3f));
			b[2] = (char)(0x80 | (u & 0x3f));
			m = 3;
		} else {
			b[0] = (char)(0xf0 | u >> 18);
			b[1] = (char)(0x80 | (u >> 12 & 0x3f));
			b[2] = (char)(0x80 | (u >> 6 & 0x3f));
			b[3] = (char)(0x80 | (u & 0x3f));
			m = 4;
		}
		if (!put(out, cap, at, b, m, colon))
			return false;
	}
	return true;
}

/* The Python call that a CALL instruction makes, from the bytecode (doc/python.md, "The Python
 * call"): e.g. "comm.allreduce". Only at the first sight of a site, without the GIL: a code
 * object is immutable but for co_code_adaptive's opcodes and inline caches, which a thread
 * holding the GIL may rewrite while we read (specializing, or back to the adaptive form). An
 * opcode byte is stored whole, and every form of an instruction maps through _PyOpcode_Deopt
 * to the same base opcode, whose cache count is fixed; opargs are never rewritten; the names
 * (co_names, co_localsplusnames) and the positions (co_linetable) never change. So the read
 * sees the instructions the compiler wrote. */
enum {
	RING = 256,     /* instructions before the call looked at, at most */
	CHAIN = 4,      /* names of a receiver chain kept, at most (MPI.COMM_WORLD.allreduce) */
};

struct insn {
	int at, op, arg; /* code unit of the opcode (after its EXTENDED_ARGs), base opcode, oparg */
};

struct pos {
	int line, col;
};

static bool pos_of(PyCodeObject *code, int at, struct pos *p)
{
	int endline, endcol;
	return addr2loc(code, at * (int)sizeof(_Py_CODEUNIT), &p->line, &p->col, &endline,
			&endcol) &&
	       p->line > 0 && p->col >= 0; /* -X no_debug_ranges: no columns */
}

/* The name an instruction loads (a variable or an attribute), or NULL. */
static PyObject *name_of(PyCodeObject *code, const struct insn *i)
{
	PyObject *t = code->co_names;
	int k = i->arg;
	switch (i->op) {
	case LOAD_FAST:
	case LOAD_DEREF: /* 3.11: an index into the fast locals, cells included */
		t = code->co_localsplusnames;
		break;
	case LOAD_GLOBAL:
		k = i->arg >> 1; /* its low bit: push NULL first */
		break;
	case LOAD_NAME:
	case LOAD_ATTR:
	case LOAD_METHOD:
		break;
	default:
		return NULL;
	}
	if (!t || !PyTuple_Check(t) || k < 0 || k >= PyTuple_GET_SIZE(t))
		return NULL;
	return PyTuple_GET_ITEM(t, k);
}

/* The call made by the instruction at code unit instr into out (cap bytes, no colon, NUL-
 * terminated; "" when there is none to name): the LOAD_METHOD or LOAD_ATTR nearest before it
 * that starts where the call starts (before that, only the call's own arguments, which start
 * later), and the receiver chain of LOAD_ATTRs down to a LOAD_FAST/NAME/GLOBAL/DEREF that
 * start there too. Anything else (a callee that is no attribute, a computed one, no columns):
 * "". A computed receiver (f().allreduce) gives the attributes as far as they go. */
static void call_name(PyCodeObject *code, int instr, char *out, size_t cap)
{
	out[0] = '\0';
	if (!addr2loc || instr >= Py_SIZE(code))
		return;
	const _Py_CODEUNIT *units = _PyCode_CODE(code);
	int op = _PyOpcode_Deopt[_Py_OPCODE(units[instr])];
	if (op != CALL && op != PRECALL && op != CALL_FUNCTION_EX)
		return; /* PRECALL: a specialized PRECALL makes the call itself */
	struct pos target;
	if (!pos_of(code, instr, &target))
		return;
	/* Instruction boundaries only show walking forward: the caches are not instructions. */
	struct insn ring[RING];
	int n = 0, ext = 0, at = 0;
	while (at < instr) {
		_Py_CODEUNIT w = units[at];
		int o = _PyOpcode_Deopt[_Py_OPCODE(w)], arg = _Py_OPARG(w) | ext;
		if (o == 0)
			return; /* not an instruction: give up */
		ext = o == EXTENDED_ARG ? arg << 8 : 0;
		if (o != EXTENDED_ARG)
			ring[n++ % RING] = (struct insn){ at, o, arg };
		at += 1 + _PyOpcode_Caches[o];
	}
	if (at != instr)
		return;
	int stop = n > RING ? n - RING : 0, k = n - 1;
	struct pos p;
	for (; k >= stop; k--) {
		const struct insn *i = &ring[k % RING];
		if (i->op == PRECALL || i->op == KW_NAMES)
			continue; /* parts of a call: this one's, or one inside its arguments */
		if (!pos_of(code, i->at, &p))
			return;
		if (p.line == target.line && p.col == target.col)
			break;
	}
	if (k < stop || (ring[k % RING].op != LOAD_METHOD && ring[k % RING].op != LOAD_ATTR))
		return;
	PyObject *names[CHAIN];
	int m = 0;
	for (; k >= stop && m < CHAIN; k--) {
		const struct insn *i = &ring[k % RING];
		if (m > 0 && (!pos_of(code, i->at, &p) || p.line != target.line ||
			      p.col != target.col))
			break;
		PyObject *name = name_of(code, i);
		if (!name)
			break;
		names[m++] = name;
		if (i->op != LOAD_ATTR && i->op != LOAD_METHOD)
			break; /* the variable the chain starts from */
	}
	size_t len = 0;
	for (int j = m - 1; j >= 0; j--)
		if ((j < m - 1 && !put(out, cap, &len, ".", 1, false)) ||
		    !put_str(out, cap, &len, names[j], false)) {
			len = 0;
			break;
		}
	out[len < cap ? len : 0] = '\0';
}

/* "python:FUNCTION:CALL:FILE" of instruction instr of code into out (cap bytes, NUL-
 * terminated): CALL as call_name says, maybe empty; FILE absolute (a relative one from the
 * working directory), "<string>" and the like as they are. */
static bool describe(PyCodeObject *code, int instr, char *out, size_t cap)
{
	size_t at = 0;
	char call[256];
	call_name(code, instr, call, sizeof call);
	if (!put(out, cap, &at, NT_LOG_PYTHON_PREFIX, strlen(NT_LOG_PYTHON_PREFIX), true) ||
	    !put_str(out, cap, &at, code->co_qualname ? code->co_qualname : code->co_name, false) ||
	    !put(out, cap, &at, ":", 1, true) || !put(out, cap, &at, call, strlen(call), false) ||
	    !put(out, cap, &at, ":", 1, true))
		return false;
	size_t file_at = at;
	if (!put_str(out, cap, &at, code->co_filename, true))
		return false;
	if (at > file_at && out[file_at] != '/' && out[file_at] != '<') {
		char cwd[4096];
		size_t flen = at - file_at;
		if (!getcwd(cwd, sizeof cwd))
			return false;
		size_t clen = strlen(cwd);
		if (clen + 1 + flen >= cap - file_at)
			return false;
		memmove(out + file_at + clen + 1, out + file_at, flen);
		memcpy(out + file_at, cwd, clen);
		out[file_at + clen] = '/';
		at += clen + 1;
	}
	if (at >= cap)
		return false;
	out[at] = '\0';
	return true;
}

static uint32_t hash_of(const char *s, size_t n)
{
	uint32_t h = 2166136261u;
	for (size_t i = 0; i < n; i++)
		h = (h ^ (unsigned char)s[i]) * 16777619u;
	return h;
}

/* The pool offset + 1 of name (each distinct name kept once), or 0 when the pool is full.
 * Only at the first sight of a site: the scan is over the names kept so far. */
static uint32_t intern(const char *name)
{
	size_t n = strlen(name);
	uint32_t h = hash_of(name, n), found = 0;
	pthread_mutex_lock(&pool_lock);
	for (size_t at = 0; at < pool_used && !found;) {
		uint32_t eh, en;
		memcpy(&eh, pool + at, 4);
		memcpy(&en, pool + at + 4, 4);
		if (eh == h && en == n && memcmp(pool + at + 8, name, n) == 0)
			found = (uint32_t)(at + 8 + 1);
		at += (8 + en + 1 + 7) & ~(size_t)7;
	}
	size_t need = (8 + n + 1 + 7) & ~(size_t)7;
	if (!found && pool && need <= pool_bytes - pool_used && pool_used + 8 < UINT32_MAX) {
		uint32_t n32 = (uint32_t)n;
		memcpy(pool + pool_used, &h, 4);
		memcpy(pool + pool_used + 4, &n32, 4);
		memcpy(pool + pool_used + 8, name, n + 1);
		found = (uint32_t)(pool_used + 8 + 1);
		pool_used += need;
	} else if (!found) {
		__atomic_store_n(&pool_full, 1, __ATOMIC_RELAXED);
	}
	pthread_mutex_unlock(&pool_lock);
	return found;
}

/* The thread's last Python site: a loop calls the same one again and again. */
struct py_cache {
	unsigned gen, fn;
	uintptr_t ret, key;
	struct nt_site *site;
};
static NT_TLS struct py_cache cache;

struct nt_site *nt_pysite_site(unsigned fn, struct nt_site *c_site)
{
	PyCodeObject *code;
	int instr;
	if (!this_tstate || !innermost(&code, &instr))
		return c_site;
	uintptr_t key = key_of(code, instr);
	if (!key)
		return c_site;
	uintptr_t ret = c_site->ret;
	unsigned gen = __atomic_load_n(&pool_gen, __ATOMIC_ACQUIRE);
	if (cache.key == key && cache.ret == ret && cache.fn == fn && cache.gen == gen)
		return cache.site;
	struct nt_site *s = nt_sites_find(fn, ret, key);
	if (!s) {
		/* First sight: the name, then the site; once the pool is full, new Python sites
		 * are counted at their C site (a scan of the pool on each of their calls would
		 * cost far more than the call). */
		char name[4096 + 512];
		uint32_t at = 0;
		if (!__atomic_load_n(&pool_full, __ATOMIC_RELAXED) &&
		    describe(code, instr, name, sizeof name))
			at = intern(name);
		if (!at) {
			__atomic_fetch_add(&unnamed, 1, __ATOMIC_RELAXED);
			return c_site;
		}
		int line = addr2line(code, instr * (int)sizeof(_Py_CODEUNIT));
		s = nt_sites_lookup_py(fn, ret, key, at, line > 0 ? (uint32_t)line : 0);
		if (!s)
			return c_site;
	}
	cache = (struct py_cache){ gen, fn, ret, key, s };
	return s;
}

#else /* built without Python's headers: C call sites */

void nt_pysite_init(int rank)
{
	(void)rank;
}

bool nt_pysite_is_python(uintptr_t ret)
{
	(void)ret;
	return false;
}

struct nt_site *nt_pysite_site(unsigned fn, struct nt_site *c_site)
{
	(void)fn;
	return c_site;
}
#endif
