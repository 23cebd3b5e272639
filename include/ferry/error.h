// Public error types. Every failure the library reports is a ferry::Error with a category; messages name the
// model, node, op and value involved. The library never aborts on bad input.
#pragma once

#include <stdexcept>
#include <string>

namespace ferry {

enum class ErrorCategory {
  kInvalidModel,       // the model file or graph is malformed or fails validation
  kUnsupported,        // valid, but Ferry (or the chosen backends) cannot run it
  kInvalidArgument,    // bad caller input: wrong input name, dtype, shape, option
  kResourceExhausted,  // memory limit, size overflow
  kInternal,           // a bug in Ferry
};

const char* ErrorCategoryName(ErrorCategory category);

class Error : public std::runtime_error {
 public:
  Error(ErrorCategory category, const std::string& message) : std::runtime_error(message), category_(category) {}
  ErrorCategory category() const { return category_; }

 private:
  ErrorCategory category_;
};

class InvalidModelError : public Error {
 public:
  explicit InvalidModelError(const std::string& m) : Error(ErrorCategory::kInvalidModel, m) {}
};
class UnsupportedError : public Error {
 public:
  explicit UnsupportedError(const std::string& m) : Error(ErrorCategory::kUnsupported, m) {}
};
class InvalidArgumentError : public Error {
 public:
  explicit InvalidArgumentError(const std::string& m) : Error(ErrorCategory::kInvalidArgument, m) {}
};
class ResourceExhaustedError : public Error {
 public:
  explicit ResourceExhaustedError(const std::string& m) : Error(ErrorCategory::kResourceExhausted, m) {}
};
class InternalError : public Error {
 public:
  explicit InternalError(const std::string& m) : Error(ErrorCategory::kInternal, m) {}
};

}  // namespace ferry
