# pb_write_if_changed(OUT TEXT): writes TEXT to OUT unless OUT holds it
# already, so that a generated header left as it was rebuilds nothing.
function(pb_write_if_changed out text)
  if(EXISTS "${out}")
    file(READ "${out}" old)
    if(old STREQUAL text)
      return()
    endif()
  endif()
  file(WRITE "${out}" "${text}")
endfunction()
