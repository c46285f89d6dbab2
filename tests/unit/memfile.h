// In-memory FILEs for the unit tests of writers and readers: one to write into and read back
// as text, one to read a string from.
#ifndef NT_TESTS_UNIT_MEMFILE_H
#define NT_TESTS_UNIT_MEMFILE_H

#include <cstdio>
#include <cstdlib>
#include <string>

// An in-memory FILE whose text is available after close().
class memfile {
public:
	memfile() { f_ = open_memstream(&buf_, &len_); }
	~memfile()
	{
		if (f_)
			fclose(f_);
		free(buf_);
	}
	memfile(const memfile &) = delete;
	memfile &operator=(const memfile &) = delete;
	FILE *f() { return f_; }
	std::string text()
	{
		fflush(f_);
		return std::string(buf_, len_);
	}

private:
	char *buf_ = nullptr;
	size_t len_ = 0;
	FILE *f_ = nullptr;
};

// A FILE reading from a string (fmemopen needs a mutable buffer that outlives it).
class strfile {
public:
	explicit strfile(const std::string &s) : data_(s)
	{
		f_ = fmemopen(&data_[0], data_.size(), "r");
	}
	~strfile()
	{
		if (f_)
			fclose(f_);
	}
	strfile(const strfile &) = delete;
	strfile &operator=(const strfile &) = delete;
	FILE *f() { return f_; }

private:
	std::string data_;
	FILE *f_ = nullptr;
};

#endif // NT_TESTS_UNIT_MEMFILE_H
