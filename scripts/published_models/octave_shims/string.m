function s = string(m)
% GNU Octave 7 lacks MATLAB's string arrays; the published CDNA models only index the rows of
% a character matrix converted with string(), which a cell array of the rows serves as well.
s = cellstr(m);
end
