// The iteration order of a java.util.HashMap or HashSet built with the default constructor, for
// String keys: where Kafka prints the keys of such a map (a message listing topics, the first of
// several errors found), the bridge must visit them in the same order to print the same text.
//
// Java's order: buckets ascending, bucket = (h ^ (h >>> 16)) & (capacity - 1) with h =
// String.hashCode() over the UTF-16 code units; within a bucket, insertion order (a resize splits
// a bucket's list without reordering it). The capacity starts at 16 and doubles each time the
// size passes 0.75 of it; removals never shrink it. Not modelled: a bucket of 8 or more keys in
// a table of 64 or more is turned into a tree (ordered by hash, then by compareTo), which needs
// that many colliding names.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace kib {

// java.lang.String.hashCode() of the UTF-8 text `s` (decoded to UTF-16 first; an invalid byte
// counts as U+FFFD, as Java's decoder replaces it).
int32_t java_string_hash(std::string_view s);

// The distinct keys of `inserted` (insertion order, repeats allowed: a repeat keeps its first
// place) in the order a default-constructed HashMap/HashSet that had them all put iterates them.
// `peak_size` is the largest size the Java collection reached, when keys were removed between
// the puts (0: the number of distinct keys); `initial_capacity` what `new HashMap<>(n)` was given
// (16 for the default constructor; Java rounds it up to a power of two).
std::vector<std::string> java_hash_order(const std::vector<std::string>& inserted, size_t peak_size = 0,
                                         size_t initial_capacity = 16);

}  // namespace kib
