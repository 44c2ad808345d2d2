# Builds the ClrMD helper (this directory) into OUT with `dotnet build`; run
# by the build (the `dotnet-regions` target of the top CMakeLists.txt) as
#   cmake -DDOTNET=... -DSRC=... -DOUT=... -DOBJ=... -DLOG=... -DSTAMP=... -P build.cmake
# ClrMD comes from NuGet: when it cannot be had (no network, no cache) the
# helper is not built, which is said once, and everything else is: the
# stamp is made either way, so the build does not try again until a source
# changes ('pageblame dotnet-regions' then says how to get the helper).
execute_process(
  COMMAND ${CMAKE_COMMAND} -E env DOTNET_CLI_TELEMETRY_OPTOUT=1 DOTNET_NOLOGO=1 DOTNET_SKIP_FIRST_TIME_EXPERIENCE=1
          ${DOTNET} build ${SRC} -c Release --nologo -v q -nodeReuse:false -p:UseSharedCompilation=false
          --artifacts-path ${OBJ} -o ${OUT}
  RESULT_VARIABLE rc
  OUTPUT_VARIABLE log
  ERROR_VARIABLE log
  TIMEOUT 900)
file(WRITE ${LOG} "${log}")
if(NOT rc EQUAL 0)
  file(REMOVE ${OUT}/dotnet-regions.dll)
  message(WARNING "the ClrMD helper did not build (dotnet build: ${rc}; log: ${LOG}): "
                  "'pageblame dotnet-regions' and the runtime tables of 'pageblame record' are missing; "
                  "everything else is built")
else()
  # dotnet build leaves an up-to-date output untouched: the dll is newer than
  # its sources from now on.
  file(TOUCH ${OUT}/dotnet-regions.dll)
endif()
file(TOUCH ${STAMP})
