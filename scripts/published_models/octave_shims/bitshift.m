function r = bitshift(x, n)
% GNU Octave 7's bitshift takes the shift count modulo the integer's width (bitshift of a
% uint64 by -70 shifts by -6), where MATLAB shifts every bit out and returns 0. The published
% CDNA3 model shifts a uint64 product sum by more than 64 places when C is far above the
% products (AddTwoNonNormSums in models/tools/Generic_BFMA_TC.m); this shim gives MATLAB's 0
% for a shift of the integer's width or more and the built-in's result otherwise.
r = builtin('bitshift', x, n);
if isinteger(x)
  w = 8 * numel(typecast(zeros(1, 1, class(x)), 'uint8'));
else
  w = 53;
end
out = abs(n) >= w;
if any(out(:))
  if isscalar(n)
    r(:) = 0;
  else
    if isscalar(r)
      r = repmat(r, size(n));
    end
    r(out) = 0;
  end
end
end
