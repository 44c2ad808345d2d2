#include "processor/symbols/demangle.h"

#include "gtest/gtest.h"

namespace pageblame::symbols {
namespace {

TEST(DemangleTest, FullSignaturesOnRequest) {
  EXPECT_EQ(Demangle("_ZN3foo3barEi", true), "foo::bar(int)");
  EXPECT_EQ(Demangle("_ZNSt6vectorIiSaIiEE9push_backERKi", true),
            "std::vector<int, std::allocator<int> >::push_back(int const&)");
}

// perf 6.1 prints names without parameters (no DMGL_PARAMS).
TEST(DemangleTest, NamesOnlyByDefault) {
  EXPECT_EQ(Demangle("_ZN3foo3barEi"), "foo::bar");
  EXPECT_EQ(Demangle("_ZNSt6vectorIiSaIiEE9push_backERKi"),
            "std::vector<int, std::allocator<int> >::push_back");
  EXPECT_EQ(Demangle("_ZNK3foo3getEv"), "foo::get");        // const member
  EXPECT_EQ(Demangle("_Z3maxIiET_S0_S0_"), "max<int>");      // template: return type dropped
  EXPECT_EQ(Demangle("_ZN12_GLOBAL__N_14execEv"), "(anonymous namespace)::exec");
  EXPECT_EQ(Demangle("_ZN3foo3barEi.part.0"), "foo::bar");  // GCC clone
  EXPECT_EQ(Demangle("_ZlsRSoRK1A"), "operator<<");
  EXPECT_EQ(Demangle("_ZN1AcvbEv"), "A::operator bool");
  EXPECT_EQ(Demangle("_ZN1AclEv"), "A::operator()");
  EXPECT_EQ(Demangle("_ZThn8_N1B1fEv"), "non-virtual thunk to B::f");
}

TEST(DemangleTest, StripSignatureCases) {
  EXPECT_EQ(StripSignature("void ns::f<int>(int) const &"), "ns::f<int>");
  EXPECT_EQ(StripSignature("ns::f(std::function<void (int)>)"), "ns::f");
  EXPECT_EQ(StripSignature("f()::{lambda(int)#1}::operator()(int) const"),
            "f()::{lambda(int)#1}::operator()");
  EXPECT_EQ(StripSignature("std::map<int, int>::operator[](int const&)"),
            "std::map<int, int>::operator[]");
  EXPECT_EQ(StripSignature("vtable for Foo"), "vtable for Foo");  // not a function
}

TEST(DemangleTest, OtherNamesUnchanged) {
  EXPECT_EQ(Demangle("malloc"), "malloc");
  EXPECT_EQ(Demangle("i"), "i");  // would be "int" as a type mangling
  EXPECT_EQ(Demangle("_Z"), "_Z");
  EXPECT_EQ(Demangle("_Zgarbage!"), "_Zgarbage!");
  EXPECT_EQ(Demangle(""), "");
}

}  // namespace
}  // namespace pageblame::symbols
