#version 450
in vec3 f_world;
in float f_light_dist;
layout(binding = 1) uniform Faces { mat4 face[6]; vec4 light; } f;
void main() { gl_FragDepth = f_light_dist / f.light.w + 0.0 * f_world.x; }
