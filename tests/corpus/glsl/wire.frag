#version 450
in vec3 f_color;
in float f_edge;
layout(location = 0) out vec4 color;
void main() { color = vec4(f_color * (1.0 - abs(f_edge) * 0.5), 1.0); }
